package dev.idempotency.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Checks the Alloy model of the lease protocol (see docs/model.md): every invariant holds for the
 * protocol as the code has it, at small bounds in every build and at larger ones in the deep
 * setting ({@code -Didempotency.model.deep=true}); each broken variant yields a counterexample to
 * the invariant it breaks.
 */
class ProtocolModelTest {

    /** The invariants of protocol.als; checks.als has a small and a deep command for each. */
    static final List<String> INVARIANTS = List.of("AtMostOneCompletion", "StaleNeverRecords", "PrepareNeverRepeats",
            "WorkerRunsOnlyWhatItHolds", "AnswersMatchRecord", "LeaseExclusive", "EveryOperationEndsFinal");

    static Stream<String> invariants() {
        return INVARIANTS.stream();
    }

    @ParameterizedTest(name = "{0} holds at small bounds")
    @MethodSource("invariants")
    void everyInvariantHoldsAtSmallBounds(String invariant) {
        ModelChecker.Result result = ModelChecker.run("checks.als", "small" + invariant);
        System.out.println(result);
        assertThat(result.instance()).as("a counterexample to %s:%n%s", invariant,
                result.instance() ? ModelChecker.trace(result) : "").isFalse();
    }

    @ParameterizedTest(name = "{0} holds at the deep setting's bounds")
    @MethodSource("invariants")
    @EnabledIfSystemProperty(named = "idempotency.model.deep", matches = "true")
    void everyInvariantHoldsAtTheDeepSettingsBounds(String invariant) {
        ModelChecker.Result result = ModelChecker.run("checks.als", "deep" + invariant);
        System.out.println(result);
        assertThat(result.instance()).as("a counterexample to %s:%n%s", invariant,
                result.instance() ? ModelChecker.trace(result) : "").isFalse();
    }

    /** Each broken variant, and the invariants it must break. */
    static Stream<Arguments> brokenVariants() {
        return Stream.of(
                Arguments.of("variants/no_fencing.als", "StaleNeverRecords"),
                Arguments.of("variants/no_fencing.als", "AtMostOneCompletion"),
                Arguments.of("variants/no_fencing.als", "AnswersMatchRecord"),
                Arguments.of("variants/early_take_over.als", "LeaseExclusive"),
                Arguments.of("variants/worker_reprepares.als", "PrepareNeverRepeats"),
                Arguments.of("variants/worker_runs_on_held.als", "WorkerRunsOnlyWhatItHolds"),
                Arguments.of("variants/release_drops_point.als", "PrepareNeverRepeats"),
                Arguments.of("variants/no_give_up.als", "EveryOperationEndsFinal"));
    }

    @ParameterizedTest(name = "{0} breaks {1}")
    @MethodSource("brokenVariants")
    void eachBrokenVariantYieldsACounterexample(String variant, String invariant) {
        ModelChecker.Result result = ModelChecker.run(variant, "small" + invariant);
        System.out.println(result);
        assertThat(result.instance()).as("a counterexample to %s in %s", invariant, variant).isTrue();
        System.out.println(ModelChecker.trace(result));
    }

    @Test
    void everyVariantFileChecksWhatThisTestExpectsOfIt() {
        for (String variant : List.of("no_fencing", "early_take_over", "worker_reprepares", "worker_runs_on_held",
                "release_drops_point", "no_give_up")) {
            String file = "variants/" + variant + ".als";
            List<String> expected = brokenVariants().filter(a -> a.get()[0].equals(file)).map(a -> "small" + a.get()[1]).toList();
            assertThat(ModelChecker.commands(file)).as(file).containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    @Test
    void aCallThatOutlastsTheRetentionLetsTheNextClaimTakeALiveLeaseAsNew() {
        ModelChecker.Result result = ModelChecker.run("checks.als", "smallExtensionPastRetention");
        System.out.println(result);
        assertThat(result.instance()).as("the store's extendLease revives a lease on an expired record").isTrue();
        System.out.println(ModelChecker.trace(result));
    }
}
