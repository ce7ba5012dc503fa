/**
 * The {@code Idempotency-Key} header in Spring MVC: {@code @IdempotentEndpoint} controller
 * methods behind a servlet filter. Exports its one package, and opens it: Spring reflects on its
 * configuration class. The Servlet API is the container's (Tomcat's own jar, in an embedded
 * server), required here at compile time only, as the Jakarta module does.
 */
@SuppressWarnings("exports") // the API names the Servlet types, which the application's own module reads
module dev.idempotency.spring.webmvc {
    requires transitive dev.idempotency.http;
    requires transitive dev.idempotency.jakarta; // IdempotencyScope extends its ServletScope
    requires transitive dev.idempotency.spring;
    requires transitive spring.beans;
    requires transitive spring.core;
    requires transitive spring.context;
    requires transitive spring.web; // the filter is a OncePerRequestFilter
    requires transitive spring.webmvc;
    requires static jakarta.servlet;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.spring.webmvc;
    // @EnableIdempotentEndpoints imports IdempotentEndpointsConfiguration, which Spring reflects on.
    opens dev.idempotency.spring.webmvc;
}
