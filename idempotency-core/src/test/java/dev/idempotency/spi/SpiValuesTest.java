package dev.idempotency.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TxWork;
import org.junit.jupiter.api.Test;

class SpiValuesTest {

    @Test
    void recoveryPointsAreEqualByCodecAndStateContents() {
        RecoveryPoint a = new RecoveryPoint("c", new byte[] {1, 2});
        RecoveryPoint same = new RecoveryPoint("c", new byte[] {1, 2});
        assertThat(a).isEqualTo(same).hasSameHashCodeAs(same);
        assertThat(a).isNotEqualTo(new RecoveryPoint("c", new byte[] {1, 3}));
        assertThat(a).isNotEqualTo(new RecoveryPoint("d", new byte[] {1, 2}));
        assertThat(a).isNotEqualTo(new RecoveryPoint("c", null));
        assertThat(a).isNotEqualTo("c");
        assertThat(new RecoveryPoint("c", null)).isEqualTo(new RecoveryPoint("c", null))
                .hasSameHashCodeAs(new RecoveryPoint("c", null));
        assertThat(a.hashCode()).isNotEqualTo(new RecoveryPoint("c", new byte[] {1, 3}).hashCode());
        assertThat(a.hashCode()).isNotEqualTo(new RecoveryPoint("d", new byte[] {1, 2}).hashCode());
        assertThat(a.hashCode()).isEqualTo(31 * "c".hashCode() + java.util.Arrays.hashCode(new byte[] {1, 2}));
        assertThat(a.toString()).isEqualTo("RecoveryPoint[codec=c, state=2 bytes]");
        assertThat(new RecoveryPoint("c", null).toString()).isEqualTo("RecoveryPoint[codec=c, state=null]");
    }

    @Test
    void byDefaultOnlyAConflictInTheCauseChainIsRetryable() {
        TransactionRunner<Object> runner = new TransactionRunner<>() {
            @Override
            public <T, X extends Exception> T inTransaction(TxWork<Object, T, X> work) throws X {
                return work.apply(new Object());
            }
        };
        TransactionConflictException conflict = new TransactionConflictException(IdempotencyKey.of("k"), null);
        assertThat(runner.isRetryable(conflict)).isTrue();
        assertThat(runner.isRetryable(new RuntimeException(new IllegalStateException(conflict)))).isTrue();
        assertThat(runner.isRetryable(new RuntimeException(new IllegalStateException()))).isFalse();
        assertThat(runner.isRetryable(null)).isFalse();
        RuntimeException selfCaused = new RuntimeException() {
            @Override
            public synchronized Throwable getCause() {
                return this;
            }
        };
        assertThat(runner.isRetryable(selfCaused)).isFalse();
    }
}
