package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The static entry points of {@link Idempotent}: each overload records, replays and compares fingerprints in the default table. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IdempotentTest {

    private final HikariDataSource ds = TestDatabases.h2("idempotent-entry-points");
    private final ResultCodec<Integer> number = ResultCodec.of("number-v1", String::valueOf, Integer::valueOf);

    @BeforeAll
    void createTable() throws Exception {
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(ds);
    }

    @AfterAll
    void closePool() {
        ds.close();
    }

    @Test
    void everyOverloadRecordsAndReplaysThroughTheSharedDefaults() throws Exception {
        IdempotencyKey plain = IdempotencyKey.of("static", "plain");
        Outcome<String> first = Tx.commit(ds, c -> Idempotent.execute(plain, c, () -> "first"));
        assertThat(first).isEqualTo(new Outcome.Executed<>(plain, "first"));
        Outcome<String> replay = Tx.commit(ds, c -> Idempotent.execute(plain, c, () -> "second"));
        assertThat(replay.isReplay()).isTrue();
        assertThat(replay.value()).isEqualTo("first");

        IdempotencyKey printed = IdempotencyKey.of("static", "fingerprinted");
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(printed, Fingerprint.of("A")), c,
                () -> "a")).isExecuted()).isTrue();
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(printed, Fingerprint.of("B")), c, () -> "b")).status())
                .isEqualTo(Outcome.Status.MISMATCH);

        IdempotencyKey coded = IdempotencyKey.of("static", "coded");
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(coded, number), c, () -> 41)).isExecuted()).isTrue();
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(coded, number), c, () -> 0)).value()).isEqualTo(41);

        IdempotencyKey both = IdempotencyKey.of("static", "both");
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(both, number).withFingerprint(Fingerprint.of("A")),
                c, () -> 7)).isExecuted()).isTrue();
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(both, number).withFingerprint(Fingerprint.of("A")),
                c, () -> 8)).value()).isEqualTo(7);
        assertThat(Tx.commit(ds, c -> Idempotent.execute(IdempotentCall.of(both, number).withFingerprint(Fingerprint.of("B")),
                c, () -> 9)).status())
                .isEqualTo(Outcome.Status.MISMATCH);

        assertThat(Tx.count(ds,
                "SELECT COUNT(*) FROM idempotency_record WHERE scope = 'static' AND key_id IN ('plain', 'fingerprinted', 'coded', 'both')")).isEqualTo(4);
    }

    @Test
    void defaultsAreOneInstanceAndTheBuilderMakesNewOnesOnTheDefaultTable() throws Exception {
        assertThat(Idempotent.ofDefaults()).isSameAs(Idempotent.ofDefaults());
        assertThat(Idempotent.ofDefaults().store()).isInstanceOf(JdbcIdempotencyStore.class);
        var own = Idempotent.builder().build();
        assertThat(own).isNotSameAs(Idempotent.ofDefaults()).isNotSameAs(Idempotent.builder().build());
        IdempotencyKey key = IdempotencyKey.of("static", "builder");
        assertThat(Tx.<Outcome<String>>commit(ds, c -> own.execute(key, c, () -> "own")).isExecuted()).isTrue();
        assertThat(Tx.commit(ds, (Connection c) -> Idempotent.execute(key, c, () -> "other")).value()).isEqualTo("own");
    }

    @Test
    void managedRunsItsOwnTransactionsOnTheDataSource() {
        IdempotencyKey key = IdempotencyKey.of("static", "managed");
        var managed = Idempotent.managed(ds);
        assertThat(managed.execute(key, c -> "in its own transaction").isExecuted()).isTrue();
        Outcome<String> replay = managed.execute(key, c -> "again");
        assertThat(replay.isReplay()).isTrue();
        assertThat(replay.value()).isEqualTo("in its own transaction");
    }

    /** A null key or call in a typed variable is refused by name, and nothing is written. */
    @Test
    void aNullKeyOrCallIsRefusedByName() throws Exception {
        IdempotencyKey key = null;
        IdempotentCall<String> call = null;
        int before = Tx.count(ds, "SELECT COUNT(*) FROM idempotency_record");
        assertThatThrownBy(() -> Tx.commit(ds, c -> Idempotent.execute(key, c, () -> "x"))).isInstanceOf(NullPointerException.class)
                .hasMessage("key");
        assertThatThrownBy(() -> Tx.commit(ds, c -> Idempotent.execute(call, c, () -> "x"))).isInstanceOf(NullPointerException.class)
                .hasMessage("call");
        assertThatThrownBy(() -> Idempotent.managed(ds).execute(key, c -> "x")).isInstanceOf(NullPointerException.class)
                .hasMessage("key");
        assertThat(Tx.count(ds, "SELECT COUNT(*) FROM idempotency_record")).isEqualTo(before);
    }
}
