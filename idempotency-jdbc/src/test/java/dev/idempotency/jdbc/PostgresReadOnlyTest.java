package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.ResultCodec;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.testsupport.DatabaseServer;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A read-only transaction that the library runs itself (the connection does not say it is read-only,
 * as on a standby server or with {@code default_transaction_read_only}): the refusal says that the
 * library rolled it back, not that the caller must.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresReadOnlyTest {

    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
    private HikariDataSource readOnly;

    @BeforeAll
    void pools() {
        try (HikariDataSource writable = TestDatabases.postgres()) {
            store.createTableIfMissing(writable);
        }
        DatabaseServer server = DatabaseServer.postgres();
        String url = server.url();
        readOnly = TestDatabases.pool(url + (url.contains("?") ? "&" : "?") + "options=-c%20default_transaction_read_only%3Don",
                server.user(), server.password(), 2);
    }

    @AfterAll
    void close() {
        if (readOnly != null) {
            readOnly.close();
        }
    }

    @Test
    void aReadOnlyTransactionTheLibraryRunsIsRefusedAsRolledBackByTheLibrary() {
        ManagedIdempotency<Connection> managed = Idempotent.managed(readOnly);
        IdempotencyKey key = IdempotencyKey.of("read-only", UUID.randomUUID().toString());
        assertThatThrownBy(() -> managed.execute(key, tx -> "r")).isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("the library rolled back the transaction it ran").hasMessageNotContaining("roll back,");
        assertThatThrownBy(() -> Idempotent.leased(readOnly).lease(IdempotentCall.of(key, ResultCodec.string()),
                attempt -> "r")).isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("the library rolled back the transaction it ran").hasMessageNotContaining("roll back,");
    }
}
