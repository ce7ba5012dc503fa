package dev.idempotency.jdbc.jdbi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.TxSavepoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

/**
 * The JDBC store for Jdbi: each call delegates to a {@link JdbcIdempotencyStore} with the handle's
 * own connection ({@link Handle#getConnection()}), so the key's record is written in the handle's
 * transaction and commits or rolls back with it. Jdbi's transaction handling stays in charge:
 * {@code jdbi.inTransaction(handle -> ...)} commits when the callback returns and rolls back when it
 * throws, and the store never ends a transaction itself.
 *
 * <p>A handle that is closed or not inside a transaction is refused with
 * {@link TransactionRequiredException} before anything is written.
 *
 * <p>Immutable and thread-safe; share one instance.
 */
public final class JdbiIdempotencyStore implements LeasingStore<Handle> {

    private final JdbcIdempotencyStore jdbc;

    private JdbiIdempotencyStore(JdbcIdempotencyStore jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * @param jdbc the store that does the work (table name, dialect)
     * @return a store for Jdbi handles
     */
    public static JdbiIdempotencyStore of(JdbcIdempotencyStore jdbc) {
        return new JdbiIdempotencyStore(Objects.requireNonNull(jdbc, "jdbc"));
    }

    /** @return a store for Jdbi handles on {@link JdbcIdempotencyStore#ofDefaults()} */
    public static JdbiIdempotencyStore ofDefaults() {
        return of(JdbcIdempotencyStore.ofDefaults());
    }

    /** @return the JDBC store it delegates to */
    public JdbcIdempotencyStore jdbcStore() {
        return jdbc;
    }

    @Override
    public void checkTransaction(Handle tx, IdempotencyKey key) {
        Objects.requireNonNull(tx, "tx");
        if (tx.isClosed()) {
            throw new TransactionRequiredException(key, "the Jdbi handle is closed; nothing was written");
        }
        boolean inTransaction;
        try {
            inTransaction = tx.isInTransaction();
        } catch (JdbiException e) {
            throw new IdempotencyStoreException(key, "could not ask the Jdbi handle whether it is in a transaction", e);
        }
        if (!inTransaction) {
            throw new TransactionRequiredException(key, "the Jdbi handle is not inside a transaction, so the key's record could"
                    + " not be committed atomically with your change; call execute inside jdbi.inTransaction(handle -> ...)"
                    + " or useTransaction, or after handle.begin(). Nothing was written");
        }
        jdbc.checkTransaction(tx.getConnection(), key);
    }

    @Override
    public Claim claim(Handle tx, ClaimRequest request) {
        return jdbc.claim(tx.getConnection(), request);
    }

    @Override
    public void complete(Handle tx, Completion completion) {
        jdbc.complete(tx.getConnection(), completion);
    }

    @Override
    public Claim writeLast(Handle tx, ClaimRequest request, Completion completion) {
        return jdbc.writeLast(tx.getConnection(), request, completion);
    }

    @Override
    public List<Claim> claimAll(Handle tx, List<ClaimRequest> requests) {
        return jdbc.claimAll(tx.getConnection(), requests);
    }

    @Override
    public void completeAll(Handle tx, List<Completion> completions) {
        jdbc.completeAll(tx.getConnection(), completions);
    }

    @Override
    public void release(Handle tx, IdempotencyKey key) {
        jdbc.release(tx.getConnection(), key);
    }

    @Override
    public TxSavepoint savepoint(Handle tx) {
        return jdbc.savepoint(tx.getConnection());
    }

    @Override
    public int purgeExpired(Handle tx, Instant now, int limit) {
        return jdbc.purgeExpired(tx.getConnection(), now, limit);
    }

    @Override
    public LeaseClaim claimLease(Handle tx, LeaseRequest request) {
        return jdbc.claimLease(tx.getConnection(), request);
    }

    @Override
    public Optional<Instant> extendLease(Handle tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return jdbc.extendLease(tx.getConnection(), key, ownerToken, lease);
    }

    @Override
    public boolean checkpoint(Handle tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        return jdbc.checkpoint(tx.getConnection(), key, ownerToken, point);
    }

    @Override
    public Optional<Instant> completeLeased(Handle tx, String ownerToken, LeasedCompletion completion) {
        return jdbc.completeLeased(tx.getConnection(), ownerToken, completion);
    }

    @Override
    public boolean releaseLease(Handle tx, IdempotencyKey key, String ownerToken) {
        return jdbc.releaseLease(tx.getConnection(), key, ownerToken);
    }

    @Override
    public String toString() {
        return "JdbiIdempotencyStore[" + jdbc + "]";
    }
}
