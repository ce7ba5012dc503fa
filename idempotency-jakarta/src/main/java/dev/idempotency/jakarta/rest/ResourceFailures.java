package dev.idempotency.jakarta.rest;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps what nothing nearer maps as the runtime would (a {@link WebApplicationException}'s own
 * response, else an empty 500, the exception logged), so that the response filter runs and rolls
 * back the request's transaction: an unmapped exception reaches the container past every response
 * filter. Before every request, it rolls back a transaction left open on the thread all the same.
 * Registered by {@link IdempotencyRestFeature}; a runtime that discovers providers as classes
 * (Quarkus REST) registers classes of its own that delegate to one. Stateless and thread-safe.
 */
@PreMatching
@Priority(Priorities.USER * 2) // after the application's own mappers of the same type
public final class ResourceFailures implements ExceptionMapper<Throwable>, ContainerRequestFilter {

    /** A mapper and pre-matching filter; it keeps no state. */
    public ResourceFailures() {
    }

    private static final Logger log = LoggerFactory.getLogger(ResourceFailures.class);

    @Override
    public Response toResponse(Throwable failure) {
        boolean open = IdempotencyRestFilters.failOpen();
        if (failure instanceof WebApplicationException wae) {
            return wae.getResponse();
        }
        log.error("A resource method failed{}", open ? "; its transaction rolls back with the key's claim" : "", failure);
        return Response.serverError().build();
    }

    @Override
    public void filter(ContainerRequestContext request) {
        IdempotencyRestFilters.rollBackLeaked();
    }
}
