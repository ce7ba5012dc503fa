/**
 * A user's module: it reads the library by its published module names, from the module path.
 *
 * <p>It requires only the modules it calls: the library's jars are explicit modules that
 * declare what they need, so the core, {@code java.sql} and Jdbi come with it ({@code requires
 * transitive}) and SLF4J is resolved because the library's modules require it. It requires every
 * published module, so that each is resolved and checked here.
 */
module dev.idempotency.jpms.test {
    requires dev.idempotency.jdbc;
    requires dev.idempotency.http;
    requires dev.idempotency.jdbi;
    // Without the Jakarta APIs, which a container supplies: the module still resolves.
    requires dev.idempotency.jakarta;
    // Without Quarkus and its APIs as well.
    requires dev.idempotency.quarkus;
    requires dev.idempotency.testkit;
    requires dev.idempotency.micrometer;
    requires dev.idempotency.r2dbc;
    requires dev.idempotency.redis;
    requires dev.idempotency.dynamodb;
    requires dev.idempotency.kafka;
    requires dev.idempotency.spring;
    requires dev.idempotency.spring.kafka;
    // Without the Servlet API as well.
    requires dev.idempotency.spring.webmvc;
    requires dev.idempotency.spring.webflux;
    requires dev.idempotency.spring.boot.autoconfigure;
}
