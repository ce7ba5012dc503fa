package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.http.HttpIdempotency;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The settings of the auto-configured HTTP layer of
 * {@link dev.idempotency.spring.webmvc.IdempotentEndpoint} methods ({@link IdempotencyWebMvcAutoConfiguration}), under
 * {@code idempotency.http.*}:
 *
 * <pre>
 * idempotency.http.replayed-headers=Content-Type,Content-Language,Content-Location,Location,ETag,Last-Modified
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
}
