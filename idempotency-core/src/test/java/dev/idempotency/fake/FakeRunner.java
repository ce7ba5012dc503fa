package dev.idempotency.fake;

import dev.idempotency.TxWork;
import dev.idempotency.spi.TransactionRunner;
import java.util.ArrayDeque;
import java.util.Deque;

/** Runs each transaction of {@link FakeStore} on the calling thread; commit failures can be queued. */
public final class FakeRunner implements TransactionRunner<FakeTx> {
    private final FakeStore store;
    /** Thrown, one per transaction, instead of committing. */
    public final Deque<RuntimeException> commitFailures = new ArrayDeque<>();
    public int transactions;
    public int commits;

    public FakeRunner(FakeStore store) {
        this.store = store;
    }

    @Override
    public <T, X extends Exception> T inTransaction(TxWork<FakeTx, T, X> work) throws X {
        transactions++;
        FakeTx tx = store.begin();
        T result = work.apply(tx); // a failure drops tx: rolled back
        RuntimeException failure = commitFailures.poll();
        if (failure != null) {
            throw failure;
        }
        store.commit(tx);
        commits++;
        return result;
    }
}
