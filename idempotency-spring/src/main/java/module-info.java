/**
 * Transactional mode in Spring: the JDBC store in the transaction of the application's own
 * transaction manager. Exports its one package.
 */
module dev.idempotency.spring {
    requires transitive dev.idempotency.jdbc;
    requires transitive java.sql;
    requires transitive spring.tx; // PlatformTransactionManager is in this API
    requires spring.jdbc;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.spring;
}
