package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import dev.idempotency.spi.RecoveringStore;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;

/** The rules of named operations and of the recovery worker's builder, before any store access. */
class RecoveryWorkerRulesTest {

    private final FakeStore store = new FakeStore();
    private final FakeRunner runner = new FakeRunner(store);
    /** A store that lists named operations, never called: the builder's rules are checked before any access. */
    private final RecoveringStore<FakeTx> listing = unusedRecoveringStore();
    private final RecoveringLeasedIdempotency<FakeTx> recovering = LeasedIdempotency.of(listing, runner);

    @SuppressWarnings("unchecked")
    private static RecoveringStore<FakeTx> unusedRecoveringStore() {
        return (RecoveringStore<FakeTx>) Proxy.newProxyInstance(RecoveryWorkerRulesTest.class.getClassLoader(),
                new Class<?>[] {RecoveringStore.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "toString" -> "ListingStore";
                    case "heardBy" -> proxy;
                    default -> throw new AssertionError("not used: " + method);
                });
    }

    private static Phases<FakeTx, String, RuntimeException> phases() {
        return Phases.<FakeTx, String, RuntimeException>prepare(tx -> "p", ResultCodec.string())
                .call((attempt, p) -> p).result(ResultCodec.string());
    }

    @Test
    void aNameIsOneTo64LettersDigitsDotsUnderscoresOrDashes() {
        assertThat(phases().named("charge.v2_eu-1").operation()).isEqualTo("charge.v2_eu-1");
        assertThat(phases().named("a".repeat(64)).operation()).hasSize(64);
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
    void aWorkerListsTheOperationsOfItsEnginesOwnStore() {
        // A worker over a store that lists no operations, and named phases run by its engine, do not compile:
        // StoreCapabilityCompileTest in idempotency-examples compiles both attempts.
        assertThat(recovering.store()).isSameAs(listing);
        assertThat(RecoveryWorker.builder(recovering).register(phases().named("charge")).build().operations())
                .containsExactly("charge");
    }

    @Test
    void theBuilderRefusesTwiceRegisteredPhasesAndBadSettings() {
        RecoveryWorker.Builder<FakeTx> builder = RecoveryWorker.builder(recovering).register(phases().named("charge"));
        assertThatThrownBy(() -> builder.register(phases().named("charge"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("registered already");
        assertThatThrownBy(() -> builder.maxAttempts(0)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> builder.pageSize(0)).hasMessageContaining("pageSize");
        assertThatThrownBy(() -> builder.interval(java.time.Duration.ZERO)).hasMessageContaining("interval");
        assertThatThrownBy(() -> builder.backoff(java.time.Duration.ofMillis(-1))).hasMessageContaining("backoff");
    }
}
