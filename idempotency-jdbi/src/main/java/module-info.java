/**
 * The Jdbi adapter: the JDBC store's records kept through a Jdbi handle's connection, in the
 * handle's transaction. Exports its one package.
 */
module dev.idempotency.jdbi {
    requires transitive dev.idempotency.jdbc;
    requires transitive org.jdbi.v3.core; // its Handle and Jdbi are in this API
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.jdbi;
}
