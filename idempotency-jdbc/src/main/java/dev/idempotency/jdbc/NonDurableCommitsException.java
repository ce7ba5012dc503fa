package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import org.jspecify.annotations.Nullable;

/**
 * The database acknowledges commits before they are durable (a setting such as H2's
 * {@code WRITE_DELAY} or PostgreSQL's {@code synchronous_commit=off}), and the store was built with
 * {@link JdbcIdempotencyStore.Builder#requireDurableCommits(boolean) requireDurableCommits(true)}.
 * A crash could lose a commit after it returned, the key's record with it, and the retry would run
 * the work again. Thrown before anything is read or written; change the setting, or build the store
 * without the requirement to accept the risk.
 */
public class NonDurableCommitsException extends IdempotencyStoreException {

    private static final long serialVersionUID = 1L;

    private final String setting;

    /**
     * @param key the key of the refused call, or {@code null}
     * @param setting the setting and how to make commits durable, as the dialect describes it
     */
    public NonDurableCommitsException(@Nullable IdempotencyKey key, String setting) {
        super(key, "the database acknowledges commits before they are durable (" + setting + "), and this store requires"
                + " durable commits (requireDurableCommits): nothing was written", null);
        this.setting = setting;
    }

    /** @return the setting that makes commits non-durable, and how to change it */
    public String setting() {
        return setting;
    }
}
