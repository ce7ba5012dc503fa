package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read-only connection or transaction is named as such, and nothing is written: refused up front
 * where {@link Connection#isReadOnly()} tells, and the database's own read-only error translated
 * where it does not (a read-only transaction begun in SQL, a read-only database or standby).
 */
class ReadOnlyTransactionTest {

    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table("ro_record").build();
    private final Idempotency<Connection> idem = Idempotency.of(store);
    private final AtomicInteger executions = new AtomicInteger();
    private final IdempotencyKey key = IdempotencyKey.of("ro", "k");

    private String work() {
        executions.incrementAndGet();
        return "ran";
    }

    private AbstractThrowableAssert<?, ? extends Throwable> assertRefusedAsReadOnly(Connection c) {
        return assertThatThrownBy(() -> idem.execute(key, c, this::work))
                .isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("read-only")
                .hasMessageContaining("Nothing was written")
                .satisfies(e -> assertThat(((TransactionRequiredException) e).keyId()).isEqualTo("k"));
    }

    private void assertNothingWritten(HikariDataSource ds) throws SQLException {
        assertThat(executions).as("the work never ran").hasValue(0);
        assertThat(Tx.count(ds, "SELECT COUNT(*) FROM ro_record")).isZero();
    }

    /** The read-only flag that the driver reports, on a server, and a read-only transaction begun in SQL. */
    private void onAServer(HikariDataSource ds, String readOnlyTransaction) throws Exception {
        try (ds) {
            store.createTableIfMissing(ds);
            Tx.commit(ds, c -> c.createStatement().executeUpdate("DELETE FROM ro_record"));
            Connection flagged = ds.getConnection();
            try {
                flagged.setReadOnly(true);
                flagged.setAutoCommit(false);
                assertRefusedAsReadOnly(flagged).hasMessageContaining("setReadOnly");
                flagged.rollback();
            } finally {
                flagged.close();
                ds.evictConnection(flagged);
            }
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute(readOnlyTransaction);
                }
                assertThat(c.isReadOnly()).as("the driver does not know").isFalse();
                assertRefusedAsReadOnly(c).hasMessageContaining("SQLState 25006")
                        // the caller's transaction, which the caller rolls back: not one the library ran
                        .hasMessageContaining("roll back, and use a read-write transaction on the primary")
                        .satisfies(e -> assertThat(e.getSuppressed()).singleElement().isInstanceOf(SQLException.class));
                c.rollback();
            }
            assertNothingWritten(ds);
        }
    }

    @Test
    void postgresql() throws Exception {
        onAServer(TestDatabases.postgres(), "SET TRANSACTION READ ONLY");
    }

    @Test
    void mariadb() throws Exception {
        onAServer(TestDatabases.mariadb(), "START TRANSACTION READ ONLY");
    }

    @Test
    void hsqldb() throws Exception {
        onAServer(TestDatabases.hsqldb("read-only", 4), "SET TRANSACTION READ ONLY");
    }

    /**
     * H2 takes {@code setReadOnly(true)} as a hint only and writes anyway; a database opened read-only
     * says so through {@code isReadOnly()}, and its error 90097 is translated for a store used directly.
     */
    @Test
    void h2DatabaseOpenedReadOnly(@TempDir Path dir) throws Exception {
        String url = "jdbc:h2:file:" + dir.resolve("ro") + ";WRITE_DELAY=0";
        try (Connection c = DriverManager.getConnection(url)) {
            store.createTableIfMissing(c);
        }
        try (Connection c = DriverManager.getConnection(url + ";ACCESS_MODE_DATA=r")) {
            c.setAutoCommit(false);
            assertRefusedAsReadOnly(c);
            ClaimRequest request = new ClaimRequest(key, Fingerprint.NONE, Instant.now(), Instant.now().plusSeconds(60), Duration.ofSeconds(1));
            assertThatThrownBy(() -> store.claim(c, request))
                    .isInstanceOf(TransactionRequiredException.class)
                    .hasMessageContaining("read-only")
                    .hasMessageContaining("Nothing was written")
                    .satisfies(e -> assertThat(e.getSuppressed()).singleElement().isInstanceOf(SQLException.class)
                            .extracting(x -> ((SQLException) x).getErrorCode()).isEqualTo(90097));
            c.rollback();
        }
        try (Connection c = DriverManager.getConnection(url)) {
            assertThat(c.createStatement().executeQuery("SELECT COUNT(*) FROM ro_record").next()).isTrue();
            try (var rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM ro_record")) {
                rs.next();
                assertThat(rs.getInt(1)).isZero();
            }
        }
        assertThat(executions).hasValue(0);
    }

    @Test
    void sqliteOpenedReadOnly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ro.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file)) {
            store.createTableIfMissing(c);
        }
        org.sqlite.SQLiteConfig config = new org.sqlite.SQLiteConfig();
        config.setReadOnly(true);
        try (Connection c = config.createConnection("jdbc:sqlite:" + file)) {
            c.setAutoCommit(false);
            assertRefusedAsReadOnly(c);
            c.rollback();
        }
        assertThat(Files.exists(file)).isTrue();
        assertThat(executions).hasValue(0);
    }
}
