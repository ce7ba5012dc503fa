package dev.idempotency.quarkus;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.Provider;
import java.security.Principal;

/** The test application's authentication: the client named in {@code X-Client} is the principal. */
@Provider
@Priority(Priorities.AUTHENTICATION)
public class ClientAuthentication implements ContainerRequestFilter {

    @Override
    public void filter(ContainerRequestContext request) {
        String client = request.getHeaderString("X-Client");
        if (client == null) {
            return;
        }
        Principal principal = () -> client;
        request.setSecurityContext(new SecurityContext() {
            @Override
            public Principal getUserPrincipal() {
                return principal;
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
            }

            @Override
            public boolean isSecure() {
                return false;
            }

            @Override
            public String getAuthenticationScheme() {
                return "X-Client";
            }
        });
    }
}
