/**
 * The Spring Framework adapter. {@link dev.idempotency.spring.SpringIdempotency} runs the engine
 * inside the transaction that Spring manages on the calling thread ({@code @Transactional},
 * {@code TransactionTemplate}), on the connection Spring bound to it, so that the key's record
 * commits and rolls back with everything else the transaction does, JDBC and JPA alike.
 * {@link dev.idempotency.spring.SpringTransactions} lets the modes in which the library runs its own
 * transactions ({@link dev.idempotency.ManagedIdempotency}: retries, lease mode, batch jobs) run them
 * through a Spring {@code PlatformTransactionManager}. Stable.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.spring;

import org.jspecify.annotations.NullMarked;
