package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import javax.sql.DataSource;
import org.springframework.beans.factory.InitializingBean;

/** Creates the table, with the DDL of the detected database, when the context starts, if it is missing. */
final class IdempotencyTableCreator implements InitializingBean {

    private final JdbcIdempotencyStore store;
    private final DataSource dataSource;

    IdempotencyTableCreator(JdbcIdempotencyStore store, DataSource dataSource) {
        this.store = store;
        this.dataSource = dataSource;
    }

    @Override
    public void afterPropertiesSet() {
        store.createTableIfMissing(dataSource);
    }
}
