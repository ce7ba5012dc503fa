package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabases;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The store contract on in-memory HSQLDB in MVCC mode, through a HikariCP pool. */
class HsqldbStoreTest extends AbstractJdbcStoreTest {

    private final LazyPool pool = new LazyPool(() -> TestDatabases.hsqldb("contract", 24));

    @Override
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Statements of a first execution, as the dialect's Javadoc states: SELECT, MERGE, the completing UPDATE; a replay, one SELECT. */
    static final int STATEMENTS_PER_FIRST_EXECUTION = 3;
    /** Statements of a replay, as the dialect's Javadoc states. */
    static final int STATEMENTS_PER_REPLAY = 1;

    @Override
    protected int statementsPerFirstExecution() {
        return STATEMENTS_PER_FIRST_EXECUTION;
    }

    @Override
    protected int statementsPerReplay() {
        return STATEMENTS_PER_REPLAY;
    }

    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return true;
    }

    @Override
    protected void closeDataSource() {
        pool.close();
    }

    @Test
    void textComparesWithPadSpaceByDefaultSoKeysEndingInASpaceAreRefused() throws Exception {
        Tx.commit(dataSource(), c -> idem.execute(key("k"), c, () -> "k's result"));
        assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM " + store.table() + " WHERE key_id = 'k '"))
                .as("the stored key 'k' matches 'k '").isEqualTo(1);
        for (IdempotencyKey padded : new IdempotencyKey[] {IdempotencyKey.of("tenant-1", "k "), IdempotencyKey.of("tenant-1 ", "k")}) {
            assertThatThrownBy(() -> Tx.rollback(dataSource(), c -> store.claim(c, new ClaimRequest(padded, Fingerprint.NONE,
                    clock.instant(), clock.instant().plusSeconds(60), Duration.ofSeconds(1)))))
                    .isInstanceOf(IdempotencyStoreException.class).cause().hasMessageContaining("PAD SPACE");
        }
        assertThat(records()).isEqualTo(1);
    }
}
