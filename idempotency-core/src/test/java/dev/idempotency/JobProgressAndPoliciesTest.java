package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class JobProgressAndPoliciesTest {

    @Test
    void progressCountsTheRateAndTheTimeLeft() {
        JobProgress p = new JobProgress(2, 4, 2, 2, 1, 1, 30, Duration.ofSeconds(2));
        assertThat(p.done()).isEqualTo(10);
        assertThat(p.itemsPerSecond()).isEqualTo(5.0);
        assertThat(p.remaining()).contains(Duration.ofSeconds(4));
        assertThat(p.nothingExecuted()).isFalse();
        assertThat(p.toString()).isEqualTo("10/30 items: 4 executed, 2 replayed, 2 failed, 1 held, 1 mismatched, 5 items/s,"
                + " 4 s left");
    }

    @Test
    void withoutATotalOrARateThereIsNoTimeLeft() {
        assertThat(new JobProgress(1, 1, 0, 0, 0, 0, -1, Duration.ofSeconds(1)).remaining()).isEmpty();
        assertThat(new JobProgress(1, 1, 0, 0, 0, 0, -1, Duration.ofSeconds(1)).toString()).isEqualTo(
                "1 items: 1 executed, 0 replayed, 0 failed, 0 held, 0 mismatched, 1 items/s");
        assertThat(new JobProgress(1, 1, 0, 0, 0, 0, 0, Duration.ofSeconds(1)).remaining()).contains(Duration.ZERO);
        assertThat(new JobProgress(0, 0, 0, 0, 0, 0, 10, Duration.ofSeconds(1)).remaining()).isEmpty();
        JobProgress instant = new JobProgress(1, 5, 0, 0, 0, 0, 10, Duration.ZERO);
        assertThat(instant.itemsPerSecond()).isZero();
        assertThat(instant.remaining()).isEmpty();
    }

    @Test
    void nothingExecutedMeansNoItemRanNow() {
        assertThat(new JobProgress(1, 0, 5, 0, 0, 0, 5, Duration.ofSeconds(1)).nothingExecuted()).isTrue();
        assertThat(new JobProgress(1, 1, 4, 0, 0, 0, 5, Duration.ofSeconds(1)).nothingExecuted()).isFalse();
    }

    @Test
    void backoffClampsTheRandomFactorAndDoublesFromTheInitialBound() {
        RetryPolicy p = RetryPolicy.builder().maxAttempts(100).backoff(Duration.ofNanos(100), Duration.ofNanos(1_000)).build();
        assertThat(p.backoff(1, () -> 1.0)).isEqualTo(Duration.ofNanos(100));
        assertThat(p.backoff(2, () -> 1.0)).isEqualTo(Duration.ofNanos(200));
        assertThat(p.backoff(4, () -> 1.0)).isEqualTo(Duration.ofNanos(800));
        assertThat(p.backoff(5, () -> 1.0)).isEqualTo(Duration.ofNanos(1_000));
        assertThat(p.backoff(1, () -> 7.0)).isEqualTo(Duration.ofNanos(100));
        assertThat(p.backoff(1, () -> -3.0)).isZero();
        assertThat(p.backoff(Integer.MAX_VALUE, () -> 1.0)).isEqualTo(Duration.ofNanos(1_000));
        RetryPolicy big = RetryPolicy.builder().backoff(Duration.ofMinutes(1), Duration.ofMinutes(1)).build();
        assertThat(big.backoff(100, () -> 1.0)).isEqualTo(Duration.ofMinutes(1));
        RetryPolicy zero = RetryPolicy.builder().backoff(Duration.ZERO, Duration.ZERO).build();
        assertThat(zero.backoff(3, () -> 1.0)).isZero();
        assertThatThrownBy(() -> p.backoff(0, () -> 1.0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(p.backoff(1, () -> 1.0)).isEqualTo(p.initialBackoff());
        assertThat(p.maxBackoff()).isEqualTo(Duration.ofNanos(1_000));
        assertThat(p.toString()).contains("maxAttempts=100");
    }

    @Test
    void theBackoffBoundDoublesFromTheInitialUpToTheMaximum_andTheBackoffIsAShareOfIt() {
        RetryPolicy p = RetryPolicy.builder().backoff(Duration.ofSeconds(1), Duration.ofDays(1)).build();
        assertThat(p.backoffBound(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(p.backoffBound(2)).isEqualTo(Duration.ofSeconds(2));
        assertThat(p.backoffBound(17)).isEqualTo(Duration.ofSeconds(65_536));
        assertThat(p.backoffBound(18)).isEqualTo(Duration.ofDays(1));
        assertThat(p.backoffBound(Integer.MAX_VALUE)).isEqualTo(Duration.ofDays(1));
        assertThat(p.backoff(17, () -> 0.5)).isEqualTo(Duration.ofSeconds(32_768));
        assertThatThrownBy(() -> p.backoffBound(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retry");
    }

    @Test
    void retryPolicyBoundsAreInclusive() {
        assertThat(RetryPolicy.builder().maxAttempts(1).build().maxAttempts()).isEqualTo(1);
        assertThat(RetryPolicy.builder().maxAttempts(100).build().maxAttempts()).isEqualTo(100);
        assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(101)).isInstanceOf(IllegalArgumentException.class);
        assertThat(RetryPolicy.builder().backoff(Duration.ZERO, Duration.ofDays(1)).build().maxBackoff()).isEqualTo(Duration.ofDays(1));
        assertThatThrownBy(() -> RetryPolicy.builder().backoff(Duration.ZERO, Duration.ofDays(1).plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("one day");
        assertThatThrownBy(() -> RetryPolicy.builder().backoff(null, Duration.ZERO)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void leasePolicyBoundsAreInclusive() {
        assertThat(LeasePolicy.builder().lease(Duration.ofMillis(100)).build().lease()).isEqualTo(Duration.ofMillis(100));
        assertThat(LeasePolicy.builder().lease(Duration.ofDays(1)).build().lease()).isEqualTo(Duration.ofDays(1));
        assertThatThrownBy(() -> LeasePolicy.builder().lease(Duration.ofMillis(100).minusNanos(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LeasePolicy.builder().lease(Duration.ofDays(1).plusNanos(1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(LeasePolicy.builder().waitForHolder(Duration.ZERO).build().waitForHolder()).isZero();
        assertThat(LeasePolicy.builder().waitForHolder(Duration.ofMinutes(10)).build().waitForHolder()).isEqualTo(Duration.ofMinutes(10));
        assertThatThrownBy(() -> LeasePolicy.builder().waitForHolder(Duration.ofMinutes(10).plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(LeasePolicy.builder().pollInterval(Duration.ofMillis(1)).build().pollInterval()).isEqualTo(Duration.ofMillis(1));
        assertThat(LeasePolicy.builder().pollInterval(Duration.ofMinutes(1)).build().pollInterval()).isEqualTo(Duration.ofMinutes(1));
        assertThatThrownBy(() -> LeasePolicy.builder().pollInterval(Duration.ofMinutes(1).plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LeasePolicy.builder().lease(null)).isInstanceOf(NullPointerException.class).hasMessage("lease");
        assertThat(LeasePolicy.ofDefaults().pollInterval()).isEqualTo(LeasePolicy.DEFAULT_POLL_INTERVAL);
        assertThat(LeasePolicy.ofDefaults().toString()).contains("lease=PT30S");
    }
}
