package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.StoreUnavailablePolicy;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The store-unavailable policy ({@link StoreUnavailablePolicy}) of a lease-only store whose real
 * server the test stops in the middle of a run: by default a claim that cannot reach the store is
 * refused with {@link StoreUnavailableException} and the call does not run; the named opt-in
 * {@link StoreUnavailablePolicy#RUN_WITHOUT_DEDUPLICATION} runs it (every phase once, nothing
 * recorded) and tells the listener each time; a server that stops while the call runs fails the
 * completion whatever the policy; a server started again brings deduplication back.
 *
 * <p>Extend it in the store's tests, with a server of its own that the test may stop (not the one
 * other tests share): {@link #startServer()}, {@link #stopServer()}, {@link #openStore()} and
 * {@link #emptyStore()}. One instance per class (JUnit 5); not for use across threads.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class StoreOutageContract {

    private final Heard heard = new Heard();
    private final AtomicInteger charges = new AtomicInteger();
    private @Nullable LeasedIdempotency<NoTransaction> refusing;
    private @Nullable LeasedIdempotency<NoTransaction> runningAnyway;

    /** For subclasses. */
    protected StoreOutageContract() {
    }

    /**
     * Starts the server if it is stopped, and returns once the store can use it again (the client
     * reconnected, the store's table there: a restarted server may have lost it).
     *
     * @throws Exception if it cannot be started
     */
    protected abstract void startServer() throws Exception;

    /**
     * Stops the server: the store's next call finds it unreachable.
     *
     * @throws Exception if it cannot be stopped
     */
    protected abstract void stopServer() throws Exception;

    /**
     * Called once, with the server started.
     *
     * @return the store over the server that {@link #stopServer()} stops
     * @throws Exception if it cannot be built
     */
    protected abstract LeaseOnlyStore openStore() throws Exception;

    /**
     * Deletes every record of the store, before each test.
     *
     * @throws Exception if the server refuses
     */
    protected abstract void emptyStore() throws Exception;

    /** @return the {@link StoreUnavailableException#retryAfter()} the store suggests */
    protected abstract Duration retryAfter();

    /**
     * Closes what {@link #openStore()} opened; by default nothing.
     *
     * @throws Exception if it cannot be closed
     */
    protected void closeStore() throws Exception {
    }

    /** @return lease mode on the store, refusing while it cannot be reached (the default policy) */
    protected final LeasedIdempotency<NoTransaction> refusing() {
        return java.util.Objects.requireNonNull(refusing, "the store is not open");
    }

    /** @return how many times a call of these tests ran: the charges of an outside provider */
    protected final AtomicInteger charges() {
        return charges;
    }

    @BeforeAll
    final void openTheStore() throws Exception {
        startServer();
        LeaseOnlyStore store = openStore();
        refusing = LeasedIdempotency.builder(store).listener(heard).build();
        runningAnyway = LeasedIdempotency.builder(store).listener(heard)
                .whenStoreUnavailable(StoreUnavailablePolicy.RUN_WITHOUT_DEDUPLICATION).build();
    }

    @AfterAll
    final void closeTheStore() throws Exception {
        try {
            closeStore();
        } finally {
            stopServer();
        }
    }

    @BeforeEach
    final void serverUpAndEmpty() throws Exception {
        startServer();
        emptyStore();
        heard.clear();
        charges.set(0);
    }

    /** @throws Exception if the server cannot be stopped or started */
    @Test
    public void whileTheServerIsDownTheDefaultRefusesAndTheOptInRunsWithoutDeduplicationAndIsHeard() throws Exception {
        IdempotencyKey paid = IdempotencyKey.of("orders", "paid-before");
        assertThat(charge(refusing(), paid).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charge(refusing(), paid).status()).isEqualTo(Outcome.Status.REPLAYED);

        stopServer();
        IdempotencyKey refused = IdempotencyKey.of("orders", "refused");
        assertThatThrownBy(() -> charge(refusing(), refused)).isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("could not be reached for the claim")
                .satisfies(e -> assertThat(((StoreUnavailableException) e).retryAfter()).isEqualTo(retryAfter()));
        assertThat(charges.get()).as("charges: one before the stop, none refused").isEqualTo(1);
        assertThat(heard.errors).singleElement().isInstanceOf(StoreUnavailableException.class);

        Outcome<String> unprotected = charge(runningAnyway(), paid);
        assertThat(unprotected.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charges.get()).as("the opt-in ran an operation that had already run: the price of running without the store")
                .isEqualTo(2);
        assertThat(heard.unprotected).containsExactly(paid);

        startServer();
        IdempotencyKey after = IdempotencyKey.of("orders", "after-restart");
        assertThat(charge(refusing(), after).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charge(runningAnyway(), after).status()).as("back to deduplication once the store answers")
                .isEqualTo(Outcome.Status.REPLAYED);
        assertThat(heard.unprotected).as("runs without deduplication heard").containsExactly(paid);
    }

    /** @throws Exception if the server cannot be stopped */
    @Test
    public void aServerStoppedWhileTheCallRunsFailsItsCompletionWhateverThePolicy() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("orders", "stopped-mid-call");
        assertThatThrownBy(() -> runningAnyway().lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
            charges.incrementAndGet();
            stopServer();
            return "charged";
        })).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("could not be reached for the completion");
        assertThat(charges.get()).isEqualTo(1);
        assertThat(heard.unprotected).as("the claim reached the store: nothing ran without deduplication").isEmpty();
        assertThat(heard.errors).singleElement().isInstanceOf(StoreUnavailableException.class);
    }

    /** @throws Exception if the server cannot be stopped */
    @Test
    public void theOptInRunsEachPhaseOnceWithNothingRecorded() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("orders", "phases");
        List<String> ran = new CopyOnWriteArrayList<>();
        Phases<NoTransaction, String, RuntimeException> phases = Phases.<NoTransaction, String, RuntimeException>prepare(tx -> {
            ran.add("prepare");
            return "order 9";
        }, ResultCodec.string()).<String>call((attempt, prepared) -> {
            ran.add("call (attempt " + attempt.number() + ", lease until " + attempt.leaseUntil() + ")");
            return "paid " + prepared;
        }).finish((tx, prepared, called) -> {
            ran.add("finish");
            return called;
        }, ResultCodec.string());
        stopServer();
        Outcome<String> outcome = runningAnyway().run(key, phases);
        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(outcome.value()).isEqualTo("paid order 9");
        assertThat(ran).containsExactly("prepare", "call (attempt 1, lease until " + Instant.MAX + ")", "finish");
        assertThat(heard.unprotected).containsExactly(key);
        assertThatThrownBy(() -> refusing().run(key, phases)).isInstanceOf(StoreUnavailableException.class);
        assertThat(ran).as("phases run by the refusing engine").hasSize(3);
    }

    private LeasedIdempotency<NoTransaction> runningAnyway() {
        return java.util.Objects.requireNonNull(runningAnyway, "the store is not open");
    }

    private Outcome<String> charge(LeasedIdempotency<NoTransaction> engine, IdempotencyKey key) {
        return engine.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "charge " + charges.incrementAndGet());
    }

    /** What the engine's listener heard. */
    private static final class Heard implements IdempotencyListener {
        final List<IdempotencyKey> unprotected = new CopyOnWriteArrayList<>();
        final List<Throwable> errors = new CopyOnWriteArrayList<>();

        @Override
        public void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
            unprotected.add(key);
        }

        @Override
        public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
            errors.add(failure);
        }

        void clear() {
            unprotected.clear();
            errors.clear();
        }
    }
}
