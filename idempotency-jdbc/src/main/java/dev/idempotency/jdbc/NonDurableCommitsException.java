package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import org.jspecify.annotations.Nullable;

/**
 * The database acknowledges commits before they are durable (a setting such as H2's
 * {@code WRITE_DELAY} or PostgreSQL's {@code synchronous_commit=off}), and the store's
 * {@link DurabilityCheck} refuses it: by default, a database that loses such commits with the
 * application's own process (an embedded H2 file database with its default {@code WRITE_DELAY}).
 * A crash could lose a commit after it returned, the key's record with it, and the retry would run
 * the work again. Thrown before anything is read or written; change the setting (the message says
 * how), or build the store with {@link JdbcIdempotencyStore.Builder#durabilityCheck(DurabilityCheck)
 * durabilityCheck(DurabilityCheck.WARN_ONLY)} to accept the risk.
 */
public class NonDurableCommitsException extends IdempotencyStoreException {

    private static final long serialVersionUID = 1L;

    private final String setting;

    /**
     * @param key the key of the refused call, or {@code null}
     * @param setting the setting and how to make commits durable, as the dialect describes it
     * @param check the check that refused it
     */
    public NonDurableCommitsException(@Nullable IdempotencyKey key, String setting, DurabilityCheck check) {
        super(key, "the database acknowledges commits before they are durable (" + setting + "), and this store refuses"
                + " such a database (DurabilityCheck." + check + (check == DurabilityCheck.REFUSE_EMBEDDED
                ? ", the default: the database runs inside the application, so any crash of the application loses its last"
                + " commits" : "") + "). Nothing was written. Make commits durable, or accept the risk with"
                + " JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.WARN_ONLY)", null);
        this.setting = setting;
    }

    /** @return the setting that makes commits non-durable, and how to change it */
    public String setting() {
        return setting;
    }
}
