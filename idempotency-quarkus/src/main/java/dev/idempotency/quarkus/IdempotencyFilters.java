package dev.idempotency.quarkus;

import dev.idempotency.jakarta.rest.IdempotentResource;
import dev.idempotency.jakarta.rest.IdempotencyRestFeature;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;
import java.io.IOException;

/**
 * {@link IdempotencyRestFeature}'s filters as the provider class that Quarkus REST discovers, bound
 * to the resource methods annotated {@link IdempotentResource} (see the feature for what they do). A
 * blocking resource method (any that does not return a {@code Uni} or {@code Multi}; a
 * {@code @Transactional} one) runs them on its worker thread, with it. Thread-safe.
 */
@Provider
@IdempotentResource
@Priority(Priorities.USER)
public class IdempotencyFilters implements ContainerRequestFilter, ContainerResponseFilter, WriterInterceptor {

    @Inject
    IdempotencyRestFeature feature;

    /** The resource method the request goes to, whose annotation may choose what its 5xx does. */
    @Context
    ResourceInfo resource;

    /** Created by CDI. */
    public IdempotencyFilters() {
    }

    @Override
    public void filter(ContainerRequestContext request) throws IOException {
        feature.filters().filter(request, resource);
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        feature.filters().filter(request, response);
    }

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
        feature.filters().aroundWriteTo(context);
    }
}
