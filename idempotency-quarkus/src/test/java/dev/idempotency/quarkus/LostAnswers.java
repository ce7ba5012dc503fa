package dev.idempotency.quarkus;

import dev.idempotency.jakarta.rest.IdempotentResource;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The test application's lossy network: a writer interceptor around the layer's, so that it runs
 * after the layer has recorded the response and committed, which closes the connection instead of
 * answering every {@link #loseEvery}th answer of a scope ({@code X-Client}) that starts with
 * {@code lossy-}. The client sees the connection end without an answer, as when a proxy or the
 * network drops it.
 */
@Provider
@IdempotentResource
@Priority(Priorities.USER - 1)
public class LostAnswers implements WriterInterceptor {

    /** With N above 0, every Nth answer of a scope that starts with {@code lossy-} is lost. */
    static volatile int loseEvery;
    private static final AtomicInteger ANSWERED = new AtomicInteger();

    @Inject
    HttpServerRequest request;

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
        int every = loseEvery;
        String scope = String.valueOf(request.getHeader("X-Client"));
        if (every <= 0 || !scope.startsWith("lossy-") || ANSWERED.incrementAndGet() % every != 0) {
            context.proceed();
            return;
        }
        // Held until the layer has committed, then never sent: nothing of the answer leaves before
        // the close, so the client, waiting for it, sends nothing else on the connection.
        OutputStream network = context.getOutputStream();
        context.setOutputStream(new ByteArrayOutputStream());
        try {
            context.proceed();
        } finally {
            context.setOutputStream(network);
        }
        request.connection().close();
    }
}
