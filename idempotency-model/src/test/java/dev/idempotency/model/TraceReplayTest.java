package dev.idempotency.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.testkit.InMemoryIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Replays traces that the model found (see docs/model.md) against the in-memory store, step by
 * step through the SPI, with the store's clock moved by hand where the model's clock events are.
 */
class TraceReplayTest {

    private static final Duration LEASE = Duration.ofSeconds(5);
    private static final Duration RETENTION = Duration.ofSeconds(10);
    private static final IdempotencyKey KEY = IdempotencyKey.of("charges", "k0");
    private static final Fingerprint FINGERPRINT = Fingerprint.of("charge 42");

    private Instant now = Instant.parse("2025-01-01T00:00:00Z");
    /** The store's clock: the model's clock events move it. */
    private final InstantSource clock = () -> now;
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(clock);

    private <T> T inTransaction(Function<InMemoryIdempotencyStore.Transaction, T> work) {
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        T result = work.apply(tx);
        store.commit(tx);
        return result;
    }

    private LeaseClaim claim(String token) {
        return inTransaction(tx -> store.claimLease(tx, new LeaseRequest(KEY, FINGERPRINT, token, LEASE, RETENTION, Duration.ofSeconds(1))));
    }

    /** claimNew: the claim with its prepare's recovery point and entry, in one transaction. */
    private LeaseClaim claimAndPrepare(String token) {
        return inTransaction(tx -> {
            LeaseClaim claim = store.claimLease(tx, new LeaseRequest(KEY, FINGERPRINT, token, LEASE, RETENTION, Duration.ofSeconds(1)));
            assertThat(store.checkpoint(tx, KEY, token, new RecoveryPoint("longs", "7".getBytes(StandardCharsets.UTF_8)))).isTrue();
            assertThat(store.enlist(tx, KEY, token, "charge")).isTrue();
            return claim;
        });
    }

    private Optional<Instant> complete(String token) {
        return inTransaction(tx -> store.completeLeased(tx, token,
                new LeasedCompletion(KEY, RecordStatus.COMPLETED, "longs", "1".getBytes(StandardCharsets.UTF_8), RETENTION)));
    }

    @Test
    void theNoFencingTrace_theStoreFencesTheStaleClientOut() {
        assertThat(claimAndPrepare("c0")).isInstanceOf(LeaseClaim.Acquired.class);        // claimNew c0
        now = now.plus(LEASE).plusSeconds(1);                                              // leaseEnds c0
        LeaseClaim worker = claim("w0");                                                   // resume w0
        assertThat(worker).isInstanceOfSatisfying(LeaseClaim.Acquired.class, a -> {
            assertThat(a.attempt()).isEqualTo(2);
            assertThat(a.resumeFrom()).as("the client's recovery point, unchanged").isNotNull();
        });
        boolean released = inTransaction(tx -> store.releaseLease(tx, KEY, "w0"));         // fail w0
        assertThat(released).isTrue();
        assertThat(complete("c0")).as("the stale client's completion (record c0)").isEmpty(); // fenced: lose c0
        Optional<Instant> extended = inTransaction(tx -> store.extendLease(tx, KEY, "c0", LEASE));
        assertThat(extended).as("its extension").isEmpty();
    }

    @Test
    void theRetentionTrace_aStalledCallExtendsItsLeaseOnAnExpiredRecordAndTheNextClaimTakesTheKeyAsNew() {
        assertThat(claimAndPrepare("c0")).isInstanceOf(LeaseClaim.Acquired.class);        // claimNew c0
        now = now.plus(LEASE).plusSeconds(1);                                              // leaseEnds c0
        now = now.plus(RETENTION);                                                         // expires k0
        Optional<Instant> extended = inTransaction(tx -> store.extendLease(tx, KEY, "c0", LEASE)); // extend c0
        assertThat(extended).as("the extension on the expired record").isPresent();
        assertThat(extended.orElseThrow()).isAfter(now);
        LeaseClaim next = claim("c1");                                                     // claimNew c1
        assertThat(next).as("the next claim, while c0's extended lease runs").isInstanceOfSatisfying(LeaseClaim.Acquired.class, a -> {
            assertThat(a.attempt()).as("taken as new").isEqualTo(1);
            assertThat(a.resumeFrom()).as("no recovery point: its prepare runs again").isNull();
            assertThat(a.leaseUntil()).isAfter(now);
        });
        assertThat(complete("c0")).as("the stale attempt is still fenced out").isEmpty();
    }
}
