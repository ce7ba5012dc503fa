/**
 * The {@code Idempotency-Key} header on Quarkus: CDI beans and Jakarta REST providers. Exports its
 * one package. Quarkus runs an application's jars on its own class loaders, not on the module path,
 * so this descriptor serves the compiler and the tools that read modules; it is checked on the
 * module path as the other published modules are.
 *
 * <p>The Jakarta, MicroProfile and Quarkus APIs are the application's, at its own Quarkus version:
 * required at compile time only ({@code requires static}), so that the module resolves without
 * them. Quarkus' jars (ArC, the core) publish no module name: theirs are derived from the jars'
 * file names, and a user's module never has to name them.
 */
module dev.idempotency.quarkus {
    requires transitive dev.idempotency.jakarta;
    requires static jakarta.cdi;
    requires static jakarta.inject;
    requires static jakarta.transaction;
    requires static jakarta.ws.rs;
    requires static jakarta.annotation;
    requires static microprofile.config.api;
    requires static arc;
    requires static quarkus.core;
    // The metrics, read when the application has quarkus-micrometer.
    requires static dev.idempotency.micrometer;
    requires static micrometer.core;

    exports dev.idempotency.quarkus;
}
