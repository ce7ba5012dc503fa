package dev.idempotency.jakarta.rest;

import dev.idempotency.http.HttpIdempotency;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.SecurityContext;
import java.security.Principal;
import org.jspecify.annotations.Nullable;

/**
 * The scope of a Jakarta REST request's key: the authenticated client (or tenant), so that one
 * client's key never replays another client's response. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface RestScope {

    /**
     * @param request the request, after authentication
     * @return the scope, or {@code null} if the request has no authenticated client: it is answered
     *     401 and its resource method does not run
     */
    @Nullable String scopeOf(ContainerRequestContext request);

    /**
     * @return the scope of the {@link SecurityContext}'s user principal's name
     *     ({@link HttpIdempotency#principalScope(String)}); {@code null} without one
     */
    static RestScope userPrincipal() {
        return request -> {
            SecurityContext security = request.getSecurityContext();
            Principal principal = security == null ? null : security.getUserPrincipal();
            return principal == null ? null : HttpIdempotency.principalScope(principal.getName());
        };
    }
}
