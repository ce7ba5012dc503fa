package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import org.junit.jupiter.api.Test;

/** The rules of named operations and of the recovery worker's builder, before any store access. */
class RecoveryWorkerRulesTest {

    private final FakeStore store = new FakeStore();
    private final ManagedIdempotency<FakeTx> managed = ManagedIdempotency.of(Idempotency.of(store), new FakeRunner(store));

    private static Phases<FakeTx, String, RuntimeException> phases() {
        return Phases.<FakeTx, String, RuntimeException>prepare(tx -> "p", ResultCodec.string())
                .call((attempt, p) -> p).result(ResultCodec.string());
    }

    @Test
    void aNameIsOneTo64LettersDigitsDotsUnderscoresOrDashes() {
        assertThat(phases().named("charge.v2_eu-1").operation()).contains("charge.v2_eu-1");
        assertThat(phases().operation()).isEmpty();
        assertThat(phases().named("a".repeat(64)).operation()).isPresent();
        for (String bad : new String[] {"", "-charge", "a".repeat(65), "charge now", "chärge"}) {
            assertThatThrownBy(() -> phases().named(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("operation name '" + bad + "'");
        }
    }

    @Test
    void onlyPhasesWithAPrepareCanBeNamed() {
        Phases<FakeTx, String, RuntimeException> callOnly = Phases.<FakeTx, String, RuntimeException>call(attempt -> "v")
                .result(ResultCodec.string());
        assertThatThrownBy(() -> callOnly.named("charge")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has no prepare phase");
    }

    @Test
    void aNamedOperationOverAStoreThatListsNoneIsRefusedBeforeAnyAccess() {
        assertThat(managed.supportsRecovery()).isFalse();
        assertThatThrownBy(() -> managed.run(IdempotencyKey.of("s", "k"), phases().named("charge")))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("RecoveringStore")
                .hasMessageContaining("Nothing was read or written");
        assertThat(store.committedWrites()).isEmpty();
    }

    @Test
    void aWorkerNeedsARecoveringStore() {
        assertThatThrownBy(() -> RecoveryWorker.builder(managed).register(phases().named("charge")).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("RecoveringStore");
    }

    @Test
    void theBuilderRefusesUnnamedOrTwiceRegisteredPhasesAndBadSettings() {
        RecoveryWorker.Builder<FakeTx> builder = RecoveryWorker.builder(managed).register(phases().named("charge"));
        assertThatThrownBy(() -> builder.register(phases())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no name");
        assertThatThrownBy(() -> builder.register(phases().named("charge"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("registered already");
        assertThatThrownBy(() -> builder.maxAttempts(0)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> builder.pageSize(0)).hasMessageContaining("pageSize");
        assertThatThrownBy(() -> builder.interval(java.time.Duration.ZERO)).hasMessageContaining("interval");
        assertThatThrownBy(() -> builder.backoff(java.time.Duration.ofMillis(-1))).hasMessageContaining("backoff");
    }
}
