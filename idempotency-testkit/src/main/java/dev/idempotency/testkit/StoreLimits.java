package dev.idempotency.testkit;

import dev.idempotency.KeyPolicy;

/**
 * The largest keys and results a store holds, which the contract generates up to: a scope of
 * {@code maxScopeLength} characters, a key id of {@code maxIdLength}, and an encoded result of
 * {@code maxResultBytes}. A store declares them by overriding {@link StoreFixture#limits()}; the
 * default is the policy's: what {@link KeyPolicy} accepts unless told otherwise. The engine under
 * test is built with the same limits, so that it refuses anything larger before the store sees it.
 *
 * @param maxScopeLength the largest scope, 1 to {@value KeyPolicy#DEFAULT_MAX_SCOPE_LENGTH} characters
 * @param maxIdLength the largest key id, 1 to {@value KeyPolicy#DEFAULT_MAX_ID_LENGTH} characters
 * @param maxResultBytes the largest encoded result, 0 to 16 MiB, as
 *     {@link KeyPolicy.Builder#maxResultBytes(int)} accepts
 */
public record StoreLimits(int maxScopeLength, int maxIdLength, int maxResultBytes) {

    /**
     * @param maxScopeLength the largest scope
     * @param maxIdLength the largest key id
     * @param maxResultBytes the largest encoded result
     * @throws IllegalArgumentException if {@link KeyPolicy} would not accept a limit
     */
    public StoreLimits {
        KeyPolicy.builder().maxScopeLength(maxScopeLength).maxIdLength(maxIdLength).maxResultBytes(maxResultBytes).build();
    }

    /** @return the limits of a default {@link KeyPolicy}: 64-character scopes, 255-character ids, 1 MiB results */
    public static StoreLimits policyDefaults() {
        KeyPolicy p = KeyPolicy.ofDefaults();
        return new StoreLimits(p.maxScopeLength(), p.maxIdLength(), p.maxResultBytes());
    }

    /** @return a policy builder with these limits */
    KeyPolicy.Builder apply(KeyPolicy.Builder policy) {
        return policy.maxScopeLength(maxScopeLength).maxIdLength(maxIdLength).maxResultBytes(maxResultBytes);
    }
}
