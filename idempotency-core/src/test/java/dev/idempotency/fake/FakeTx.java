package dev.idempotency.fake;

import dev.idempotency.IdempotencyKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A transaction of {@link FakeStore}: a private copy of the rows and of the business writes, swapped in on commit. */
public final class FakeTx {
    final Map<IdempotencyKey, FakeStore.Row> rows;
    /** The business change of the work: what a savepoint undoes and a commit keeps. */
    public final List<String> writes;
    /** Cleared by a work that "ends" its transaction (auto-commit, close). */
    public boolean open = true;

    FakeTx(Map<IdempotencyKey, FakeStore.Row> rows, List<String> writes) {
        this.rows = new HashMap<>(rows);
        this.writes = new ArrayList<>(writes);
    }

    /** @param write a business write, undone by a savepoint rollback */
    public void write(String write) {
        writes.add(write);
    }
}
