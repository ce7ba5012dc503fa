/**
 * Jakarta EE without Spring: transactional mode in Jakarta Transactions, and the
 * {@code Idempotency-Key} header as a Jakarta Servlet filter. The Jakarta APIs are the container's:
 * required here only at compile time, so that an application reads the ones it uses.
 */
module dev.idempotency.jakarta {
    requires transitive dev.idempotency;
    requires transitive dev.idempotency.jdbc;
    requires transitive dev.idempotency.http;
    requires transitive java.sql;
    requires static transitive jakarta.transaction;
    requires static transitive jakarta.servlet;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.jakarta.transaction;
    exports dev.idempotency.jakarta.servlet;
}
