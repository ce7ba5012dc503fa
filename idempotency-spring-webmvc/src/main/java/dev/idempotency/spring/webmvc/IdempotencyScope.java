package dev.idempotency.spring.webmvc;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jakarta.servlet.ServletScope;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;

/**
 * The scope of a request's key: the authenticated client (or its tenant), so that one client's key
 * never replays another client's response. The default, {@link #userPrincipal()}, is the name of
 * {@link HttpServletRequest#getUserPrincipal()}, which Spring Security and the servlet container's
 * own authentication set, made a valid scope whatever it holds
 * ({@link HttpIdempotency#principalScope(String)}: a space, a non-ASCII letter or a long name
 * becomes a stable digest). Define a bean of this type to choose another (a tenant header that an
 * earlier filter has verified, say).
 *
 * <p>Implementations must be thread-safe: one serves every request.
 */
@FunctionalInterface
public interface IdempotencyScope extends ServletScope {

    /**
     * @return the scope of the request's authenticated principal's name
     *     ({@link HttpIdempotency#principalScope(String)}); {@code null} without one
     */
    static IdempotencyScope userPrincipal() {
        return request -> {
            Principal principal = request.getUserPrincipal();
            return principal == null ? null : HttpIdempotency.principalScope(principal.getName());
        };
    }
}
