/**
 * Spring Boot auto-configuration. Exports its one package, for the properties and customizers, and
 * opens it: Spring reflects on the auto-configuration classes, binds the properties and creates the
 * package-private failure analyzers. {@code META-INF/spring/...AutoConfiguration.imports} and
 * {@code META-INF/spring.factories} are in no package, so Spring reads them by the class path as
 * it does from any jar.
 *
 * <p>Each store and integration is optional ({@code requires static}): it is configured when the
 * application has it, and its module is then read once the application's module path resolves it.
 */
module dev.idempotency.spring.boot.autoconfigure {
    requires transitive dev.idempotency.spring;
    requires transitive spring.boot;
    requires transitive spring.boot.autoconfigure;
    requires transitive spring.beans;
    requires transitive spring.context;
    requires transitive spring.core;
    requires transitive spring.tx;
    requires org.slf4j;

    requires static dev.idempotency.http;
    requires static dev.idempotency.kafka;
    requires static dev.idempotency.spring.kafka;
    requires static dev.idempotency.spring.webmvc;
    requires static dev.idempotency.spring.webflux;
    requires static dev.idempotency.r2dbc;
    requires static r2dbc.spi;
    requires static spring.webflux;
    requires static dev.idempotency.redis;
    requires static dev.idempotency.dynamodb;
    requires static lettuce.core;
    requires static micrometer.core;
    requires static dev.idempotency.micrometer;
    requires static software.amazon.awssdk.core;
    requires static software.amazon.awssdk.regions;
    requires static software.amazon.awssdk.services.dynamodb;
    requires static spring.kafka;
    requires static spring.web;
    requires static spring.webmvc;
    requires static jakarta.servlet;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.spring.boot.autoconfigure;
    opens dev.idempotency.spring.boot.autoconfigure;
}
