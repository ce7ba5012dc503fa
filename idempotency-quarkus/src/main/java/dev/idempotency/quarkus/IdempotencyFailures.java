package dev.idempotency.quarkus;

import dev.idempotency.jakarta.rest.ResourceFailures;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * {@link ResourceFailures}' mapper as the provider class that Quarkus REST discovers: what nothing
 * nearer maps is answered as the runtime would, and the request's transaction rolls back with the
 * key's claim. Thread-safe.
 */
@Provider
@Priority(Priorities.USER * 2)
public class IdempotencyFailures implements ExceptionMapper<Throwable> {

    private final ResourceFailures failures = new ResourceFailures();

    /** Created by CDI. */
    public IdempotencyFailures() {
    }

    @Override
    public Response toResponse(Throwable failure) {
        return failures.toResponse(failure);
    }
}
