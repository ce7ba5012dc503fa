package dev.idempotency.spring.webflux;

import dev.idempotency.http.HttpIdempotency;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The scope of a request's key: the authenticated client (or its tenant), so that one client's key
 * never replays another client's response. The default, {@link #principal()}, is the name of
 * {@link ServerWebExchange#getPrincipal()}, which Spring Security's WebFlux support sets, made a
 * valid scope whatever it holds ({@link HttpIdempotency#principalScope(String)}). Define a bean of
 * this type to choose another.
 *
 * <p>Implementations must be thread-safe and must not block: one serves every request.
 */
@FunctionalInterface
public interface WebFluxScope {

    /**
     * @param exchange the request's exchange
     * @return the scope of its key; empty without an authenticated client (answered 401)
     */
    Mono<String> scopeOf(ServerWebExchange exchange);

    /** @return the scope of the exchange's authenticated principal's name; empty without one */
    static WebFluxScope principal() {
        return exchange -> exchange.getPrincipal().map(p -> HttpIdempotency.principalScope(p.getName()));
    }
}
