package dev.idempotency;

import dev.idempotency.internal.TransactionalSteps;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import java.time.InstantSource;
import org.jspecify.annotations.Nullable;

/**
 * The kernel's transactional steps, for an engine of another execution model
 * ({@link TransactionalSteps}): each method is the step that {@link TransactionalProtocol} and
 * {@link Idempotency} take, with the aftermath of the caller's transaction
 * ({@link Kernel#CLAIM_RELEASED}). Immutable and thread-safe.
 */
final class KernelSteps implements TransactionalSteps {

    static {
        TransactionalSteps.Installed.install(KernelSteps::new);
    }

    private final Kernel<Void> kernel;

    private KernelSteps(KeyPolicy policy, InstantSource clock, IdempotencyListener listener) {
        // No store of the core's: the engine that asks for these steps does the I/O itself, and no
        // step taken here reads the kernel's store.
        this.kernel = new Kernel<>(null, policy, clock, listener);
    }

    @Override
    public void validate(IdempotencyKey key) {
        kernel.policy().validate(key);
    }

    @Override
    public ClaimRequest claimRequest(IdempotencyKey key, Fingerprint fingerprint) {
        return kernel.claimRequest(key, fingerprint, kernel.now());
    }

    @Override
    public boolean mayBeOwnClaim(Claim claim, Fingerprint fingerprint) {
        return TransactionalProtocol.mayBeOwnClaim(claim, fingerprint);
    }

    @Override
    public RuntimeException nested(IdempotencyKey key) {
        return new NestedKeyException(key);
    }

    @Override
    public <T> Outcome<T> outcomeOf(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec, Claim claim) {
        return kernel.outcomeOf(key, fingerprint, codec, claim);
    }

    @Override
    public <T> Recorded<T> executed(IdempotencyKey key, @Nullable ResultCodec<T> codec, @Nullable T value) {
        Kernel.Recorded<T> recorded = kernel.executed(key, codec, value, Kernel.CLAIM_RELEASED);
        return new Recorded<>(recorded.completion(), recorded.outcome());
    }

    @Override
    public <T> Recorded<T> failed(IdempotencyKey key, Exception failure) {
        Kernel.Recorded<T> recorded = kernel.failed(key, failure);
        return new Recorded<>(recorded.completion(), recorded.outcome());
    }

    @Override
    public boolean hasFinalFailures() {
        return kernel.hasFinalFailures();
    }

    @Override
    public boolean isFinal(Exception failure) {
        return kernel.isFinal(failure);
    }

    @Override
    public AbandonedClaimException abandonedByWork(IdempotencyKey key, TransactionRequiredException ended) {
        return TransactionalProtocol.abandonedByWork(key, ended);
    }

    @Override
    public void heard(IdempotencyKey key, Outcome<?> outcome, long started) {
        kernel.heard().outcome(key, outcome, started);
    }

    @Override
    public void heardError(IdempotencyKey key, Throwable failure, long started) {
        kernel.heard().error(key, failure, started);
    }

    @Override
    public String toString() {
        return "KernelSteps[policy=" + kernel.policy() + "]";
    }
}
