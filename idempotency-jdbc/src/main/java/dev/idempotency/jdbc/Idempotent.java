package dev.idempotency.jdbc;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Work;
import dev.idempotency.ManagedIdempotency;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * The plain-Java entry point, {@code Idempotent.execute(key, tx, work)}: wrap a piece of work in a
 * key, inside a JDBC transaction you already have. Zero configuration: the table, the dialect and
 * the policy have defaults.
 *
 * <pre>{@code
 * connection.setAutoCommit(false);
 * Outcome<String> outcome = Idempotent.execute(key, connection, () -> reserve(connection, "sku-1", 2));
 * connection.commit();
 * }</pre>
 *
 * <p>Every method delegates to one ordinary, immutable {@link Idempotency} instance built from
 * {@link JdbcIdempotencyStore#ofDefaults()} and {@link dev.idempotency.KeyPolicy#ofDefaults()}:
 * table {@code idempotency_record}, the dialect detected from the connection, retention 24 hours.
 * There is no mutable global configuration: the instance is immutable. For another table, policy, clock or listener, build your own
 * with {@link #builder()} and keep it.
 *
 * <p>Thread-safe.
 */
public final class Idempotent {

    private Idempotent() {
    }

    private static final class Default {
        static final JdbcIdempotencyStore STORE = JdbcIdempotencyStore.ofDefaults();
        static final Idempotency<Connection> INSTANCE = Idempotency.of(STORE);
    }

    /** @return the shared default instance that the static methods use */
    public static Idempotency<Connection> ofDefaults() {
        return Default.INSTANCE;
    }

    /**
     * @return a builder over a default {@link JdbcIdempotencyStore}, for your own configured instance
     */
    public static Idempotency.Builder<Connection> builder() {
        return Idempotency.builder(JdbcIdempotencyStore.ofDefaults());
    }

    /**
     * Transactions run for you on connections from {@code dataSource}, with the defaults: the store
     * of {@link #ofDefaults()} and {@link dev.idempotency.RetryPolicy#ofDefaults()}. For other
     * settings build a {@link ManagedIdempotency} from {@link #builder()} and
     * {@link JdbcTransactions#of(DataSource)}; for lease mode, see {@link #leased(DataSource)}.
     *
     * @param dataSource where connections come from (a pool, typically)
     * @return a managed engine; build it once and share it
     */
    public static ManagedIdempotency<Connection> managed(DataSource dataSource) {
        return ManagedIdempotency.of(ofDefaults(), JdbcTransactions.of(dataSource));
    }

    /**
     * Lease mode, for work with effects outside the database, on connections from
     * {@code dataSource}, with the defaults: the store of {@link #ofDefaults()}, which keeps leases
     * and lists named operations, {@link dev.idempotency.RetryPolicy#ofDefaults()} and
     * {@link dev.idempotency.LeasePolicy#ofDefaults()}. It keeps its records in the same table as
     * {@link #managed(DataSource)}, so a key is run once whichever mode it comes through. For other
     * settings build it with
     * {@link LeasedIdempotency#of(ManagedIdempotency, dev.idempotency.spi.RecoveringStore, dev.idempotency.LeasePolicy)}
     * over your own store and managed engine.
     *
     * @param dataSource where connections come from (a pool, typically)
     * @return a lease-mode engine, which runs named phases too (a {@link dev.idempotency.RecoveryWorker}
     *     resumes them); build it once and share it
     */
    public static RecoveringLeasedIdempotency<Connection> leased(DataSource dataSource) {
        return LeasedIdempotency.of(managed(dataSource), Default.STORE);
    }

    /**
     * Runs {@code work} at most once for the call's key in {@code tx}'s transaction, with
     * its fingerprint and codec; see {@link Idempotency#execute(IdempotentCall, Object, Work)}.
     *
     * @param call the key, fingerprint and codec
     * @param tx the caller's connection, in its transaction (auto-commit off)
     * @param work the business change
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws NullPointerException if {@code call}, {@code tx} or {@code work} is {@code null}, before the store is used
     * @throws dev.idempotency.InvalidKeyException if the policy refuses the key
     * @throws dev.idempotency.TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws dev.idempotency.ResultCodecException if the result cannot be encoded, or a replay cannot be decoded
     * @throws dev.idempotency.ResultTooLargeException if the encoded result is over the policy's limit
     * @throws dev.idempotency.AbandonedClaimException if the work ended the transaction, or an earlier work left the key's
     *     claim committed without its result
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public static <T, X extends Exception> Outcome<T> execute(IdempotentCall<T> call, Connection tx, Work<T, X> work)
            throws X {
        return ofDefaults().execute(call, tx, work);
    }

    /**
     * The shortcut for {@code IdempotentCall.of(key)}: no fingerprint, a built-in codec chosen by the
     * result's type; see {@link Idempotency#execute(IdempotencyKey, Object, Work)}.
     *
     * @param key the key
     * @param tx the caller's connection, in its transaction (auto-commit off)
     * @param work the business change
     * @param <T> the result type: {@code String}, {@code byte[]}, {@code Integer}, {@code Long},
     *     {@code Boolean} or {@code UUID}; others need a codec
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws NullPointerException if {@code key}, {@code tx} or {@code work} is {@code null}, before the store is used
     * @throws dev.idempotency.InvalidKeyException if the policy refuses the key
     * @throws dev.idempotency.TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws dev.idempotency.ResultCodecException if the result cannot be encoded, or a replay cannot be decoded
     * @throws dev.idempotency.ResultTooLargeException if the encoded result is over the policy's limit
     * @throws dev.idempotency.AbandonedClaimException if the work ended the transaction, or an earlier work left the key's
     *     claim committed without its result
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public static <T, X extends Exception> Outcome<T> execute(IdempotencyKey key, Connection tx, Work<T, X> work) throws X {
        return ofDefaults().execute(key, tx, work);
    }
}
