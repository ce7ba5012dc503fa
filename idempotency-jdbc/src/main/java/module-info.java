/**
 * The JDBC store, its dialects and the Jdbi adapter. The {@code internal} package is not exported.
 * Jdbi is optional: {@code dev.idempotency.jdbc.jdbi} needs it, the rest of the module does not.
 */
module dev.idempotency.jdbc {
    requires transitive dev.idempotency;
    requires transitive java.sql;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations
    requires static org.jdbi.v3.core;

    exports dev.idempotency.jdbc;
    exports dev.idempotency.jdbc.dialect;
    exports dev.idempotency.jdbc.jdbi;
    // The DDL files, for a migration tool (Flyway, Liquibase) that reads them by the class path.
    opens dev.idempotency.jdbc.ddl;
}
