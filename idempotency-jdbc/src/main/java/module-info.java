/**
 * The JDBC store and its dialects. The {@code internal} package is not exported. The Jdbi adapter
 * is a module of its own, {@code dev.idempotency.jdbi}.
 */
module dev.idempotency.jdbc {
    requires transitive dev.idempotency;
    requires transitive java.sql;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.jdbc;
    exports dev.idempotency.jdbc.dialect;
    // The statements, claim rounds and failures that the R2DBC executor shares with the JDBC one.
    exports dev.idempotency.jdbc.internal to dev.idempotency.r2dbc;
    // The DDL files, for a migration tool (Flyway, Liquibase) that reads them by the class path.
    opens dev.idempotency.jdbc.ddl;
}
