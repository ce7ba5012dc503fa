/**
 * Idempotent Spring for Apache Kafka listeners, over the Kafka module's consumer. Exports its one
 * package.
 */
module dev.idempotency.spring.kafka {
    requires transitive dev.idempotency.kafka;
    requires transitive spring.kafka; // its error handler, recoverer and container types are in this API
    requires spring.core;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.spring.kafka;
}
