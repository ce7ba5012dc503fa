/**
 * The service-provider interface for store authors: {@link dev.idempotency.spi.IdempotencyStore}
 * and the values it exchanges with the engine. Stable: changes follow semantic versioning.
 * Prove a store with {@code idempotency-testkit}. {@link dev.idempotency.spi.StoreAdapters} adapts a
 * store to another transaction type (a Jdbi handle over a JDBC connection) without forwarding each
 * primitive by hand.
 *
 * <p>Which clock decides: in the primitives of one transaction ({@code claim}, {@code complete},
 * {@code writeLast}, {@code purgeExpired} and their batches), the engine's, whose instants arrive
 * in {@link dev.idempotency.spi.ClaimRequest} and {@link dev.idempotency.spi.Completion}; in the
 * lease primitives of {@link dev.idempotency.spi.LeasingStore}, the store's own, to which the engine
 * passes durations only ({@link dev.idempotency.spi.LeaseRequest},
 * {@link dev.idempotency.spi.LeasedCompletion}).
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.spi;

import org.jspecify.annotations.NullMarked;
