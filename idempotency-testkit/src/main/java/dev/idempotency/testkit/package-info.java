/**
 * The contract any {@link dev.idempotency.spi.IdempotencyStore} must pass, for store authors: extend
 * {@link dev.idempotency.testkit.StoreFixture}, answer its hooks, and implement the parts of the
 * contract the store supports, each a JUnit 5 test interface:
 * {@link dev.idempotency.testkit.ExampleContract}, {@link dev.idempotency.testkit.ConcurrencyContract},
 * {@link dev.idempotency.testkit.StatefulContract}, {@link dev.idempotency.testkit.ChunkContract},
 * {@link dev.idempotency.testkit.WriteLastContract} and, for a
 * {@link dev.idempotency.spi.LeasingStore}, {@link dev.idempotency.testkit.LeasePrimitiveContract}
 * and {@link dev.idempotency.testkit.LeasedCallContract}. Or extend
 * {@link dev.idempotency.testkit.IdempotencyStoreContract}, every part at once. Also holds
 * the settable {@link dev.idempotency.testkit.TestClock}, the {@link dev.idempotency.testkit.Effort}
 * setting of the properties, and a reference store,
 * {@link dev.idempotency.testkit.InMemoryIdempotencyStore}, that passes the contract. Stable: the
 * hooks change only with a major version; the checks grow as the contract does.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.testkit;

import org.jspecify.annotations.NullMarked;
