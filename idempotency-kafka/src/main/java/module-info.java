/**
 * Idempotent Kafka consumers: each record's effect and its offset recorded in one transaction.
 * Exports its one package.
 *
 * <p>The Kafka client's jar has no module name of its own: it is read as the automatic module
 * named after its jar, {@code kafka.clients}, which a user's module requires too.
 */
module dev.idempotency.kafka {
    requires transitive dev.idempotency;
    requires transitive java.sql; // JdbcOffsetStore: a DataSource, and offsets saved on a Connection
    requires transitive kafka.clients; // its records, consumers and partitions are in this API
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.kafka;
}
