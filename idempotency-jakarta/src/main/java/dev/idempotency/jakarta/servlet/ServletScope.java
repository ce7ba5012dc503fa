package dev.idempotency.jakarta.servlet;

import dev.idempotency.http.HttpIdempotency;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import org.jspecify.annotations.Nullable;

/**
 * The scope of a request's key: the authenticated client (or tenant), so that one client's key
 * never replays another client's response. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface ServletScope {

    /**
     * @param request the request, after authentication
     * @return the scope, or {@code null} if the request has no authenticated client: it is answered
     *     401 and its handler does not run
     */
    @Nullable String scopeOf(HttpServletRequest request);

    /**
     * @return the scope of the request's authenticated principal's name
     *     ({@link HttpIdempotency#principalScope(String)}); {@code null} without one
     */
    static ServletScope userPrincipal() {
        return request -> {
            Principal principal = request.getUserPrincipal();
            return principal == null ? null : HttpIdempotency.principalScope(principal.getName());
        };
    }
}
