package dev.idempotency;

import java.util.Objects;

/**
 * {@link Phases} under a stable name ({@link Phases#named(String)}): an operation that a
 * {@link RecoveryWorker} resumes when its client went away. Only an engine whose store lists the
 * named operations in progress runs it ({@link RecoveringLeasedIdempotency#run(IdempotencyKey, NamedPhases)}),
 * and only such an engine's worker registers it ({@link RecoveryWorker.Builder#register}): over a
 * store that lists none, both do not compile.
 *
 * <p>Immutable and thread-safe if its functions are; one definition may serve many operations.
 *
 * @param <C> the transaction type
 * @param <T> the operation's result
 * @param <X> the checked exception the phases may throw ({@link RuntimeException} if none)
 */
public final class NamedPhases<C, T, X extends Exception> {

    /** The phases, carrying the name the protocol records. */
    final Phases<C, T, X> phases;
    private final String operation;

    NamedPhases(Phases<C, T, X> phases, String operation) {
        this.phases = Objects.requireNonNull(phases, "phases");
        this.operation = Objects.requireNonNull(operation, "operation");
    }

    /** @return the name given with {@link Phases#named(String)} */
    public String operation() {
        return operation;
    }

    @Override
    public String toString() {
        return "NamedPhases[" + operation + "]";
    }
}
