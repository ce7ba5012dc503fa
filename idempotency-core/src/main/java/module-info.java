/**
 * The API and engine: {@code dev.idempotency} for applications, {@code dev.idempotency.spi} for
 * store and transaction adapters. The {@code internal} package is not exported.
 */
module dev.idempotency {
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency;
    exports dev.idempotency.spi;
}
