package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Thrown inside a transaction the library runs when work fails finally and {@link FinalUndo#TRANSACTION}
 * applies: the transaction is rolled back whole, and its owner records the failure in another one,
 * in which no work runs. It carries what to record, for a single key; a chunk carries nothing, since
 * it runs again with a savepoint per item. Never reaches a caller.
 */
final class FinalFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Kernel.@Nullable Recorded<?> recorded;

    FinalFailure(Kernel.@Nullable Recorded<?> recorded) {
        super("rolled back after a final failure", null, false, false);
        this.recorded = recorded;
    }

    /** @return the record of the failure, typed as the outcome of the call that failed */
    @SuppressWarnings("unchecked")
    <T> Kernel.Recorded<T> recorded() {
        if (recorded == null) {
            throw new IllegalStateException("a chunk's final failure carries no record", this);
        }
        return (Kernel.Recorded<T>) recorded;
    }
}
