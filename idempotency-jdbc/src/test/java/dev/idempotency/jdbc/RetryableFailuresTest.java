package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.InvalidKeyException;
import dev.idempotency.KeyInProgressException;
import dev.idempotency.TransactionConflictException;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import org.junit.jupiter.api.Test;

class RetryableFailuresTest {

    @Test
    void recognisesConflictsAtCommitAndTheLibrarysRetryableExceptions() {
        IdempotencyKey key = IdempotencyKey.of("t", "k");
        assertThat(RetryableFailures.isRetryable(new SQLException("could not serialize access", "40001"))).isTrue();
        assertThat(RetryableFailures.isRetryable(new SQLException("deadlock detected", "40P01"))).isTrue();
        assertThat(RetryableFailures.isRetryable(new SQLException("Deadlock found; try restarting transaction", "40001", 1213))).isTrue();
        assertThat(RetryableFailures.isRetryable(new SQLTransactionRollbackException("rolled back"))).isTrue();
        assertThat(RetryableFailures.isRetryable(new SQLException("[SQLITE_BUSY_SNAPSHOT] database is locked"))).isTrue();
        assertThat(RetryableFailures.isRetryable(new RuntimeException("wrapped", new SQLException("x", "40001")))).isTrue();
        assertThat(RetryableFailures.isRetryable(new TransactionConflictException(key, null))).isTrue();
        assertThat(RetryableFailures.isRetryable(new KeyInProgressException(key))).isTrue();
    }

    @Test
    void doesNotRetryMisuseOrOtherFailures() {
        assertThat(RetryableFailures.isRetryable(new SQLException("duplicate key", "23505"))).isFalse();
        assertThat(RetryableFailures.isRetryable(new SQLException("syntax", "42601"))).isFalse();
        assertThat(RetryableFailures.isRetryable(new SQLException("[SQLITE_ERROR] no such table"))).isFalse();
        assertThat(RetryableFailures.isRetryable(new InvalidKeyException("t", "", "blank"))).isFalse();
        assertThat(RetryableFailures.isRetryable(null)).isFalse();
    }

    @Test
    void aCauseCycleEnds() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertThat(RetryableFailures.isRetryable(a)).isFalse();
        assertThat(RetryableFailures.isRetryable(new SQLException("Record has changed since last read", "HY000", 1020))).isTrue();
    }
}
