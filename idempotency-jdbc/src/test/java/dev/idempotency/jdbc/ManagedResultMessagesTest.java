package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.ResultCodec;
import dev.idempotency.ResultCodecException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A result that cannot be recorded (over the size limit, or with no codec for it), on H2: the
 * message says what the library did, true for the mode it is raised in. In the caller's
 * transaction the caller rolls back; in a transaction the library runs (execute, write-last,
 * chunks) the library has rolled it back itself, and the message does not ask the caller to.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagedResultMessagesTest {

    private static final String YOURS = "roll back the transaction";
    private static final String OURS = "library rolled back the transaction it ran, the work's writes with it";

    private final HikariDataSource ds = TestDatabases.h2("managed_messages");
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table("managed_messages_record").build();
    private final Idempotency<Connection> engine = Idempotency.builder(store)
            .keyPolicy(KeyPolicy.builder().maxResultBytes(8).build()).build();
    private final ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine, JdbcTransactions.of(ds));

    @BeforeAll
    void open() throws Exception {
        store.createTableIfMissing(ds);
    }

    @AfterAll
    void close() {
        ds.close();
    }

    private static IdempotencyKey key() {
        return IdempotencyKey.of("messages", UUID.randomUUID().toString());
    }

    @Test
    void inTheCallersTransactionTheCallerIsToldToRollBack() {
        assertThatThrownBy(() -> Tx.commit(ds, c -> engine.execute(key(), c, () -> "over eight bytes")))
                .isInstanceOf(ResultTooLargeException.class).hasMessageContaining(YOURS);
        assertThatThrownBy(() -> Tx.commit(ds, c -> engine.execute(key(), c, () -> new StringBuilder("x"))))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining(YOURS);
    }

    @Test
    void managedExecuteSaysItRolledItsTransactionBack() {
        assertThatThrownBy(() -> managed.execute(key(), tx -> "over eight bytes"))
                .isInstanceOf(ResultTooLargeException.class).hasMessageContaining(OURS).hasMessageNotContaining(YOURS);
        assertThatThrownBy(() -> managed.execute(key(), tx -> new StringBuilder("x")))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining(OURS).hasMessageNotContaining(YOURS);
    }

    @Test
    void writeLastSaysItRolledItsTransactionBack() {
        assertThatThrownBy(() -> managed.writeLast(key(), tx -> "over eight bytes"))
                .isInstanceOf(ResultTooLargeException.class).hasMessageContaining(OURS).hasMessageNotContaining(YOURS);
        assertThatThrownBy(() -> managed.writeLast(key(), tx -> new StringBuilder("x")))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining(OURS).hasMessageNotContaining(YOURS);
    }

    @Test
    void aManagedChunkSaysItRolledItsTransactionBack() {
        ResultCodec<String> failing = ResultCodec.of("failing", value -> {
            throw new IllegalStateException("cannot encode");
        }, bytes -> "never");
        assertThatThrownBy(() -> managed.executeChunk(List.of(key()), k -> IdempotentCall.of(k, ResultCodec.string()),
                (tx, k) -> "over eight bytes")).isInstanceOf(ResultTooLargeException.class).hasMessageContaining(OURS)
                .hasMessageNotContaining(YOURS);
        assertThatThrownBy(() -> managed.executeChunk(List.of(key()), k -> IdempotentCall.of(k, failing), (tx, k) -> "v"))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining(OURS).hasMessageNotContaining(YOURS);
    }
}
