/**
 * The transactional mode on R2DBC, non-blocking: the key's record claimed and written in the
 * caller's R2DBC transaction, as the JDBC module's dialects describe each database. Exports its one
 * package.
 */
module dev.idempotency.r2dbc {
    requires transitive dev.idempotency;
    requires transitive dev.idempotency.jdbc; // the dialects, which the engine is built with
    requires transitive r2dbc.spi; // the engine runs on the caller's io.r2dbc.spi.Connection
    requires transitive reactor.core; // and answers a Mono
    requires transitive org.reactivestreams;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.r2dbc;
}
