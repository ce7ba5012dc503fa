package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.B;
import static dev.idempotency.testkit.StoreFixture.LOCK_TIMEOUT;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.assertOutcome;
import static dev.idempotency.testkit.StoreFixture.await;
import static dev.idempotency.testkit.StoreFixture.found;
import static dev.idempotency.testkit.StoreFixture.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.testkit.StoreFixture.Counting;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Write-last (section 3.8 of docs/contract.md): the store's
 * {@link dev.idempotency.spi.TransactionalStore#writeLast}, called directly, for any store (the SPI's
 * default claims, then completes). Its promise: {@code Contract 3.8 (write-last)}, checked for a new
 * key, an expired record and an open holder of the key.
 *
 * <p>Implement it on a {@link StoreFixture}.
 *
 * @param <C> the store's transaction type
 */
public interface WriteLastContract<C> extends ContractPart<C> {

    /**
     * The store's write-last primitive: the completed record is written only where the key has no
     * unexpired record, holds only once committed, and the normal mode replays it.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void writeLastWritesOnlyANewKeyAndHoldsOnlyOnceCommitted() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.WRITE_LAST;
        IdempotencyKey key = IdempotencyKey.of("write-last", "k1");
        assertThat(writeLast(key, A, "rolled-back", false)).as(p.broken("A first write was not written")).isInstanceOf(Claim.Acquired.class);
        assertThat(writeLast(key, A, "first", true)).as(p.broken("A write after a rolled-back one was refused: the rolled-back"
                + " record was kept")).isInstanceOf(Claim.Acquired.class);
        Claim second = writeLast(key, B, "second", false);
        assertThat(second).as(p.broken("A second write of a recorded key was not refused with the record")).isInstanceOf(Claim.Existing.class);
        StoredRecord found = ((Claim.Existing) second).record();
        assertThat(found.status()).as(p.broken("The record found")).isEqualTo(RecordStatus.COMPLETED);
        assertThat(found.fingerprint()).as(p.broken("The record found has another fingerprint")).isEqualTo(A);
        assertThat(new String(found.result(), StandardCharsets.UTF_8)).as(p.broken("The record found has another result")).isEqualTo("first");
        assertOutcome(p, f.inTx(f.idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "first");
    }

    /**
     * An expired record is replaced by the write, in the same call.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void writeLastReplacesAnExpiredRecord() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.WRITE_LAST;
        IdempotencyKey key = IdempotencyKey.of("write-last", "expired");
        writeLast(key, A, "first", true);
        f.clock.advance(RETENTION);
        assertThat(writeLast(key, B, "late", true)).as(p.broken("The write over an expired record was refused"))
                .isInstanceOf(Claim.Acquired.class);
        assertOutcome(p, f.inTx(f.idem, key, B, new Counting("retry"), true), Outcome.Status.REPLAYED, "late");
    }

    /**
     * A write waits for an open transaction that holds the key, then finds its record, or writes if it rolled back.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void writeLastWaitsForAnOpenHolderOfTheKey() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.WRITE_LAST;
        for (boolean holderCommits : List.of(true, false)) {
            IdempotencyKey key = IdempotencyKey.of("write-last", holderCommits ? "holder-commits" : "holder-rolls-back");
            C holder = f.open();
            Future<Claim> waiter;
            try {
                assertOutcome(p, f.idem.execute(IdempotentCall.of(key, A), holder, new Counting("holder")), Outcome.Status.EXECUTED, "holder");
                waiter = f.threads.submit(() -> writeLast(key, A, "waiter", true));
                Thread.sleep(100); // lets the waiter reach the store; the answer is the same if it does not
            } catch (Throwable t) {
                f.rollbackQuietly(holder, t);
                throw t;
            }
            if (holderCommits) {
                f.commit(holder);
                assertThat(await(p, waiter)).as(p.broken("A write that met an open holder which then committed was not refused"))
                        .isInstanceOf(Claim.Existing.class);
                assertOutcome(p, f.inTx(f.idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "holder");
            } else {
                f.rollback(holder);
                assertThat(await(p, waiter)).as(p.broken("A write that met an open holder which then rolled back was refused"))
                        .isInstanceOf(Claim.Acquired.class);
                assertOutcome(p, f.inTx(f.idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "waiter");
            }
        }
    }

    /**
     * One {@link dev.idempotency.spi.TransactionalStore#writeLast} of a string result, in a transaction of its own, committed if written and asked to.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private Claim writeLast(IdempotencyKey key, Fingerprint fingerprint, String value, boolean commit) throws Exception {
        StoreFixture<C> f = fixture();
        Instant now = f.clock.instant();
        ResultCodec<String> codec = ResultCodec.string();
        ClaimRequest request = new ClaimRequest(key, fingerprint, now, now.plus(RETENTION), LOCK_TIMEOUT);
        Completion done = new Completion(key, RecordStatus.COMPLETED, codec.name(), codec.encode(value), now, now.plus(RETENTION));
        C tx = f.open();
        Claim claim;
        try {
            claim = f.transactional().writeLast(tx, request, done);
        } catch (Throwable t) {
            f.rollbackQuietly(tx, t);
            throw t;
        }
        if (commit && claim instanceof Claim.Acquired) {
            f.commit(tx);
        } else {
            f.rollback(tx);
        }
        return claim;
    }
}
