package dev.idempotency.testkit;

import dev.idempotency.testkit.Operations.Sequence;
import dev.idempotency.testkit.Operations.Step;
import org.junit.jupiter.api.Test;

/**
 * The stateful property of transactional mode, for any store: random sequences of executions (keys
 * that differ by scope, by the case of the scope or of the id, and the largest keys the store's
 * limits allow; two fingerprints; work that returns a result of any type, up to the largest, throws
 * or fails finally, and meanwhile may let the clock move, call its own key again, purge, or commit
 * its own transaction; then commit or roll back), clock moves and purges, compared after every step
 * with a model of the contract. A failure names the promise broken (any of those of
 * {@link ExampleContract}) and reports the shortest failing sequence found, one step per line. The
 * properties of chunks and of leases are in {@link ChunkContract} and {@link LeasePrimitiveContract}.
 *
 * <p>Implement it on a {@link StoreFixture}; its effort is {@link StoreFixture#effort()}.
 *
 * @param <C> the store's transaction type
 */
public interface StatefulContract<C> extends ContractPart<C> {

    /**
     * Random sequences of executions, clock moves and purges, each compared with the model after every
     * step. Reports the shortest failing sequence found, one step per line.
     */
    @Test
    default void randomSequencesKeepTheContract() {
        StoreFixture<C> f = fixture();
        ExecutionSequences<C> sequences = new ExecutionSequences<>(f);
        f.sequenceProperty("sequences run", f.effort().sequences(), ExecutionSequences.sequences(), sequence -> f.runShrinking(sequence.steps(),
                steps -> sequences.firstBroken(new Sequence(steps)), Step::simpler));
    }
}
