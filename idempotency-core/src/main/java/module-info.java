/**
 * The API and engine: {@code dev.idempotency} for applications, {@code dev.idempotency.spi} for
 * store and transaction adapters. The {@code internal} package is exported only to the R2DBC
 * module, whose engine takes the transactional mode's steps from it ({@code TransactionalSteps}).
 */
module dev.idempotency {
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency;
    exports dev.idempotency.spi;
    exports dev.idempotency.internal to dev.idempotency.r2dbc;
}
