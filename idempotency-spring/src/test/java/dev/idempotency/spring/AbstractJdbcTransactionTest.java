package dev.idempotency.spring;

import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/** The work writes with {@code JdbcTemplate}, in transactions of a {@link JdbcTransactionManager}. */
abstract class AbstractJdbcTransactionTest extends AbstractSpringIdempotencyTest {

    @Override
    PlatformTransactionManager createTransactionManager() {
        return new JdbcTransactionManager(pool);
    }

    @Override
    void writePayment(String id, long cents) {
        jdbc.update("insert into spring_payment (id, cents) values (?, ?)", id, cents);
    }
}
