package dev.idempotency.spring.webmvc;

import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.WebApplicationInitializer;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.filter.DelegatingFilterProxy;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.FrameworkServlet;

/**
 * The servlet container's setup of {@link PlainPaymentsConfiguration}, as a {@code war} would have it
 * (Spring's {@code SpringServletContainerInitializer} runs a {@link WebApplicationInitializer}): the
 * {@code DispatcherServlet} on its context, and before it the stand-in authentication and the
 * {@link IdempotencyFilter} bean through a {@link DelegatingFilterProxy}.
 */
class PlainPaymentsInitializer implements WebApplicationInitializer {

    /** The request attribute that holds the authenticated shop. */
    static final String SHOP = "shop";

    volatile AnnotationConfigWebApplicationContext context;

    @Override
    public void onStartup(ServletContext servletContext) {
        // tag::initializer[]
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.register(PlainPaymentsConfiguration.class);
        ServletRegistration.Dynamic dispatcher = servletContext.addServlet("dispatcher", new DispatcherServlet(context));
        dispatcher.setLoadOnStartup(1); // its context starts with the container, before the first request
        dispatcher.addMapping("/");

        FilterRegistration.Dynamic authentication = servletContext.addFilter("authentication", new ShopAuthentication());
        authentication.addMappingForServletNames(null, false, "dispatcher");
        // The IdempotencyFilter bean of @EnableIdempotentEndpoints, in the DispatcherServlet's context, after authentication:
        DelegatingFilterProxy idempotency = new DelegatingFilterProxy(IdempotentEndpointsConfiguration.FILTER_BEAN_NAME);
        idempotency.setContextAttribute(FrameworkServlet.SERVLET_CONTEXT_PREFIX + "dispatcher");
        servletContext.addFilter("idempotency", idempotency).addMappingForServletNames(null, true, "dispatcher");
        // end::initializer[]
        this.context = context;
    }

    /** A stand-in for authentication: the {@code X-Shop} header is taken as the authenticated shop. */
    static final class ShopAuthentication extends HttpFilter {
        @Override
        protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws IOException, jakarta.servlet.ServletException {
            String shop = request.getHeader("X-Shop");
            if (shop != null) {
                request.setAttribute(SHOP, shop);
            }
            chain.doFilter(request, response);
        }
    }
}
