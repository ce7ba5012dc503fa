package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.InvalidKeyException;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.testsupport.TestDatabases;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/** Transactions that cannot carry the record are refused before the work runs, each with its own fix. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringIdempotencyRefusalsTest {

    HikariDataSource pool;
    HikariDataSource otherPool;
    TransactionTemplate transactions;
    SpringIdempotency idempotency;
    final AtomicInteger runs = new AtomicInteger();

    @BeforeAll
    void open() {
        pool = TestDatabases.h2("spring-refusals", 8);
        otherPool = TestDatabases.h2("spring-refusals-other", 8);
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(pool);
        transactions = new TransactionTemplate(new JdbcTransactionManager(pool));
        idempotency = SpringIdempotency.of(pool);
    }

    @AfterAll
    void close() {
        pool.close();
        otherPool.close();
    }

    int records() {
        return new JdbcTemplate(pool).queryForObject("select count(*) from idempotency_record", Integer.class);
    }

    @Test
    void aReadOnlyTransaction() {
        TransactionTemplate readOnly = new TransactionTemplate(transactions.getTransactionManager());
        readOnly.setReadOnly(true);
        assertThatThrownBy(() -> readOnly.execute(status -> idempotency.execute(IdempotencyKey.of("t", "ro"), runs::incrementAndGet)))
                .isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("read-only");
        assertThat(runs).hasValue(0);
    }

    @Test
    void aTransactionOfAnotherDataSource() {
        SpringIdempotency onOther = SpringIdempotency.of(otherPool);
        assertThatThrownBy(() -> transactions.execute(status -> onOther.execute(IdempotencyKey.of("t", "other"), runs::incrementAndGet)))
                .isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("holds no connection of the DataSource");
        assertThat(runs).hasValue(0);
    }

    @Test
    void transactionSynchronizationWithoutATransaction() {
        TransactionTemplate supports = new TransactionTemplate(transactions.getTransactionManager());
        supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);
        assertThatThrownBy(() -> supports.execute(status -> idempotency.execute(IdempotencyKey.of("t", "sup"), runs::incrementAndGet)))
                .isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("no Spring-managed transaction");
        assertThat(runs).hasValue(0);
    }

    @Test
    void anInvalidKeyIsRefusedFirst_evenOutsideATransaction() {
        assertThatThrownBy(() -> idempotency.execute(IdempotencyKey.of("t", "has space"), runs::incrementAndGet))
                .isInstanceOf(InvalidKeyException.class);
        assertThat(runs).hasValue(0);
    }

    @Test
    void aTransactionAwareProxyIsUnwrapped() {
        SpringIdempotency onProxy = SpringIdempotency.of(Idempotent.ofDefaults(), new TransactionAwareDataSourceProxy(pool));
        int before = records();
        Outcome<Integer> outcome = transactions.execute(status -> onProxy.execute(IdempotencyKey.of("t", "proxy"), () -> 7));
        assertThat(outcome.value()).isEqualTo(7);
        assertThat(records()).isEqualTo(before + 1);
    }

    @Test
    void purgeAndChunksNeedATransactionToo() {
        assertThatThrownBy(() -> idempotency.purgeExpired(10)).isInstanceOf(TransactionRequiredException.class);
        int purged = transactions.execute(status -> idempotency.purgeExpired(10));
        assertThat(purged).isZero();
    }
}
