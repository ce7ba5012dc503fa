package dev.idempotency.jdbi;

import dev.idempotency.Idempotency;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import org.jdbi.v3.core.Handle;

/**
 * Entry points for Jdbi users: an {@link Idempotency} whose transaction is a Jdbi {@link Handle}.
 *
 * <pre>{@code
 * Idempotency<Handle> idem = JdbiIdempotency.ofDefaults();
 * Outcome<String> outcome = jdbi.inTransaction(handle ->
 *         idem.execute(key, handle, () -> charge(handle, request)));
 * }</pre>
 *
 * Each method delegates to {@link JdbiIdempotencyStore}; nothing is kept here. Thread-safe.
 */
public final class JdbiIdempotency {

    private JdbiIdempotency() {
    }

    /** @return an engine with the default policy and clock, on table {@code idempotency_record} */
    public static Idempotency<Handle> ofDefaults() {
        return Idempotency.of(JdbiIdempotencyStore.ofDefaults());
    }

    /**
     * @param store the JDBC store to use through each handle's connection
     * @return an engine with the default policy and clock
     */
    public static Idempotency<Handle> of(JdbcIdempotencyStore store) {
        return Idempotency.of(JdbiIdempotencyStore.of(store));
    }

    /**
     * @param store the JDBC store to use through each handle's connection
     * @return a builder, to set the key policy, clock or listener
     */
    public static Idempotency.Builder<Handle> builder(JdbcIdempotencyStore store) {
        return Idempotency.builder(JdbiIdempotencyStore.of(store));
    }
}
