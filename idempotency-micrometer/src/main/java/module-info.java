/**
 * The engine's metrics in a Micrometer registry, for any framework: exports its one package. The
 * Spring Boot auto-configuration and the Quarkus module read it when the application has Micrometer.
 */
module dev.idempotency.micrometer {
    requires transitive dev.idempotency;
    requires transitive micrometer.core; // its MeterRegistry is in this API
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.micrometer;
}
