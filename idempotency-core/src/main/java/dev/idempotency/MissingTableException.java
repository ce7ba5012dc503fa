package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The idempotency table does not exist. The message names the table and the DDL that creates it.
 */
public class MissingTableException extends IdempotencyStoreException {

    private static final long serialVersionUID = 1L;

    private final String table;

    /**
     * @param key the key concerned, or {@code null}
     * @param table the table that is missing
     * @param howToCreate how to create it (the DDL resource, the opt-in call)
     * @param cause the underlying failure
     */
    public MissingTableException(@Nullable IdempotencyKey key, String table, String howToCreate, @Nullable Throwable cause) {
        super(key, "the table '" + table + "' does not exist. " + howToCreate, cause);
        this.table = table;
    }

    /** @return the name of the missing table, as configured */
    public String table() {
        return table;
    }
}
