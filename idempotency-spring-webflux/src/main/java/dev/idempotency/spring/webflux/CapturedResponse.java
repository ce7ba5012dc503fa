package dev.idempotency.spring.webflux;

import dev.idempotency.http.Response;
import java.io.ByteArrayOutputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The response a handler writes, held back: its status, headers and body bytes are kept here and
 * nothing reaches the client, so that the filter decides what is sent once the transaction has
 * ended. Cookies, the buffer factory and the commit actions are the real response's. Used by one
 * exchange at a time, as WebFlux writes a response.
 */
final class CapturedResponse extends ServerHttpResponseDecorator {

    private final HttpHeaders headers = new HttpHeaders();
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private @Nullable HttpStatusCode status;
    private boolean written;

    CapturedResponse(ServerHttpResponse real) {
        super(real);
    }

    @Override
    public boolean setStatusCode(@Nullable HttpStatusCode status) {
        this.status = status;
        return true;
    }

    @Override
    public @Nullable HttpStatusCode getStatusCode() {
        return status;
    }

    @Override
    public HttpHeaders getHeaders() {
        return headers;
    }

    @Override
    public boolean isCommitted() {
        return written;
    }

    @Override
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> buffers) {
        return Flux.from(buffers).doOnNext(this::keep).then(Mono.fromRunnable(() -> written = true));
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> buffers) {
        return writeWith(Flux.from(buffers).concatMap(Flux::from));
    }

    @Override
    public Mono<Void> setComplete() {
        return Mono.fromRunnable(() -> written = true);
    }

    private synchronized void keep(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            body.writeBytes(bytes);
        } finally {
            DataBufferUtils.release(buffer);
        }
    }

    /** @return what the handler wrote: every header, the status (200 if it set none) and the body */
    synchronized Response response() {
        Map<String, List<String>> all = new LinkedHashMap<>();
        headers.forEach((name, values) -> all.put(name, List.copyOf(values)));
        return Response.of(status == null ? 200 : status.value(), all, body.toByteArray());
    }
}
