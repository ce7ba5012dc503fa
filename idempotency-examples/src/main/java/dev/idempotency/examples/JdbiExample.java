package dev.idempotency.examples;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.jdbi.JdbiIdempotency;
import java.sql.SQLException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/** The Jdbi usage the getting-started page shows: the handle's transaction carries the key. */
public final class JdbiExample {

    private final Jdbi jdbi;
    // tag::jdbi-instance[]
    private final Idempotency<Handle> idempotency = JdbiIdempotency.ofDefaults();
    // end::jdbi-instance[]

    /** @param jdbi a Jdbi on the shop's database */
    public JdbiExample(Jdbi jdbi) {
        this.jdbi = jdbi;
    }

    /**
     * @param tenant the key's scope
     * @param idempotencyKeyHeader the client's key
     * @return the reservation, the same for every retry
     * @throws SQLException if the reservation's SQL fails (the transaction is then rolled back)
     */
    public String reserveTwo(String tenant, String idempotencyKeyHeader) throws SQLException {
        // tag::jdbi[]
        IdempotencyKey key = IdempotencyKey.of(tenant, idempotencyKeyHeader);
        Outcome<String> outcome = jdbi.inTransaction(handle ->
                idempotency.execute(key, handle, () -> Shop.reserve(handle.getConnection(), "sku-1", 2)));
        return outcome.value();
        // end::jdbi[]
    }
}
