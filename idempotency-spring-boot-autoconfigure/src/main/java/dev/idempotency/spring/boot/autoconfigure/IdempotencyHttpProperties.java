package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.ServerErrors;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The settings of the auto-configured HTTP layer of
 * {@link dev.idempotency.spring.webmvc.IdempotentEndpoint} methods ({@link IdempotencyWebMvcAutoConfiguration}), under
 * {@code idempotency.http.*}, and of {@code @IdempotentWebFluxEndpoint} methods
 * ({@link IdempotencyWebFluxAutoConfiguration}), both configured by the same settings:
 *
 * <pre>
 * idempotency.http.replayed-headers=Content-Type,Content-Language,Content-Location,Location,ETag,Last-Modified
 * idempotency.http.server-errors=record       # or release: a handler's 5xx recorded and replayed, or released
 * idempotency.http.expires-header=            # Idempotency-Key-Expires, say: the record's expiry on replays and 409s
 * </pre>
 *
 * Read when the layer is built; an application's own {@code HttpIdempotency} bean ignores them. A
 * bad value fails the application's startup with an
 * {@link InvalidIdempotencyPropertyException}. Mutable, as
 * Spring binds it; not for use across threads while it is bound.
 */
@ConfigurationProperties("idempotency.http")
public class IdempotencyHttpProperties {

    /**
     * The response headers recorded with the first response and sent again with every replay (names
     * compare without case). The list replaces the default; name Set-Cookie only if every retry may
     * receive the first response's cookies.
     */
    private Set<String> replayedHeaders = new LinkedHashSet<>(HttpIdempotency.DEFAULT_REPLAYED_HEADERS);

    /**
     * What the layer does with a handler's 5xx: record (the default) records and replays it, final for
     * its key; release records nothing, rolls the handler's writes back, and lets the retry with the
     * same key run the handler again. An @IdempotentEndpoint's serverErrors attribute decides for its
     * handler.
     */
    private ServerErrors serverErrors = ServerErrors.RECORD;

    /**
     * The response header that carries the record's expiry (an HTTP-date) on replays and 409s, for
     * example Idempotency-Key-Expires; empty (the default) sends none.
     */
    private String expiresHeader = "";

    /** Creates the defaults. */
    public IdempotencyHttpProperties() {
    }

    /** @return the response headers recorded and replayed */
    public Set<String> getReplayedHeaders() {
        return replayedHeaders;
    }

    /**
     * @param replayedHeaders the response headers recorded and replayed, in place of
     *     {@link HttpIdempotency#DEFAULT_REPLAYED_HEADERS}
     */
    public void setReplayedHeaders(Set<String> replayedHeaders) {
        this.replayedHeaders = replayedHeaders;
    }

    /** @return what the layer does with a handler's 5xx */
    public ServerErrors getServerErrors() {
        return serverErrors;
    }

    /** @param serverErrors what the layer does with a handler's 5xx: record or release */
    public void setServerErrors(ServerErrors serverErrors) {
        this.serverErrors = serverErrors;
    }

    /**
     * Applies the replayed headers, the server errors and the expiry header, the settings of every
     * auto-configured layer (the servlet one and the WebFlux one).
     *
     * @param layer the layer's builder
     * @param <C> the transaction type
     * @return {@code layer}
     * @throws InvalidIdempotencyPropertyException naming the property whose value the layer refuses
     */
    <C> HttpIdempotency.Builder<C> configure(HttpIdempotency.Builder<C> layer) {
        try {
            layer.replayedHeaders(replayedHeaders);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new InvalidIdempotencyPropertyException("idempotency.http.replayed-headers",
                    String.join(",", replayedHeaders), String.valueOf(e.getMessage()), e);
        }
        if (serverErrors == null) {
            throw new InvalidIdempotencyPropertyException("idempotency.http.server-errors", "", "name record or release", null);
        }
        try {
            layer.expiresHeader(expiresHeader == null || expiresHeader.isBlank() ? null : expiresHeader.strip());
        } catch (IllegalArgumentException e) {
            throw new InvalidIdempotencyPropertyException("idempotency.http.expires-header", expiresHeader, String.valueOf(e.getMessage()), e);
        }
        return layer.serverErrors(serverErrors);
    }

    /** @return the header carrying the record's expiry, or empty for none */
    public String getExpiresHeader() {
        return expiresHeader;
    }

    /** @param expiresHeader the header carrying the record's expiry, or empty for none */
    public void setExpiresHeader(String expiresHeader) {
        this.expiresHeader = expiresHeader;
    }
}
