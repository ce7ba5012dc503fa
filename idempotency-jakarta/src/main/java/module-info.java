/**
 * Jakarta EE without Spring: transactional mode in Jakarta Transactions, and the
 * {@code Idempotency-Key} header as a Jakarta Servlet filter and as Jakarta REST filters. The Jakarta APIs are the container's:
 * required here at compile time only, so that the module resolves without them and an application
 * requires the ones it uses ({@code requires jakarta.transaction;}, {@code requires jakarta.servlet;}, {@code requires jakarta.ws.rs;}).
 * Not transitive for that reason: javac would then demand them of every module that reads this one.
 */
@SuppressWarnings("exports") // the API names the Jakarta types, which the application's own module reads
module dev.idempotency.jakarta {
    requires transitive dev.idempotency;
    requires transitive dev.idempotency.jdbc;
    requires transitive dev.idempotency.http;
    requires transitive java.sql;
    requires static jakarta.transaction;
    requires static jakarta.servlet;
    requires static jakarta.ws.rs;
    requires static jakarta.annotation;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.jakarta.transaction;
    exports dev.idempotency.jakarta.servlet;
    exports dev.idempotency.jakarta.rest;
    exports dev.idempotency.jakarta.servlet.internal to dev.idempotency.spring.webmvc;
}
