package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryAndLeasePolicyTest {

    @Test
    void backoffGrowsExponentiallyWithinItsBoundAndIsCappedAtTheMaximum() {
        RetryPolicy p = RetryPolicy.builder().maxAttempts(10).backoff(Duration.ofMillis(10), Duration.ofMillis(50)).build();
        assertThat(p.backoff(1, () -> 0.999_999)).isBetween(Duration.ofNanos(9_999_000), Duration.ofMillis(10));
        assertThat(p.backoff(2, () -> 0.5)).isEqualTo(Duration.ofMillis(10));
        assertThat(p.backoff(3, () -> 0.5)).isEqualTo(Duration.ofMillis(20));
        assertThat(p.backoff(4, () -> 0.5)).isEqualTo(Duration.ofMillis(25));
        assertThat(p.backoff(60, () -> 1.0)).isEqualTo(Duration.ofMillis(50));
        assertThat(p.backoff(2, () -> 0.0)).isZero();
        assertThatThrownBy(() -> p.backoff(0, () -> 0.5)).hasMessageContaining("retry must be at least 1");
    }

    @Test
    void retryPolicyDefaultsAndInvalidValuesAreNamed() {
        assertThat(RetryPolicy.ofDefaults().maxAttempts()).isEqualTo(RetryPolicy.DEFAULT_MAX_ATTEMPTS);
        assertThat(RetryPolicy.none().maxAttempts()).isEqualTo(1);
        assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> RetryPolicy.builder().backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .hasMessageContaining("max backoff");
        assertThatThrownBy(() -> RetryPolicy.builder().backoff(Duration.ofMillis(-1), Duration.ofSeconds(1)))
                .hasMessageContaining("initial backoff");
    }

    @Test
    void leasePolicyDefaultsAndInvalidValuesAreNamed() {
        LeasePolicy d = LeasePolicy.ofDefaults();
        assertThat(d.lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.waitForHolder()).isZero();
        assertThatThrownBy(() -> LeasePolicy.builder().lease(Duration.ofMillis(10))).hasMessageContaining("lease must be between");
        assertThatThrownBy(() -> LeasePolicy.builder().waitForHolder(Duration.ofMillis(-1))).hasMessageContaining("waitForHolder");
        assertThatThrownBy(() -> LeasePolicy.builder().pollInterval(Duration.ZERO)).hasMessageContaining("pollInterval");
    }
}
