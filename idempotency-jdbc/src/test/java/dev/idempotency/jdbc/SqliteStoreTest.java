package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The store contract on SQLite: a temporary file in write-ahead-log mode, with the driver's default
 * deferred transactions and a busy timeout, through a HikariCP pool.
 */
public class SqliteStoreTest extends AbstractJdbcStoreTest {

    private Path dir;
    private final LazyPool pool = new LazyPool(() -> {
        try {
            dir = Files.createTempDirectory("idempotency-sqlite");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return TestDatabases.pool(TestDatabases.sqliteUrl(dir.resolve("contract.db"), ""), null, null, 24);
    });

    @Override
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Statements of a first execution, as the dialect's Javadoc states: the upsert claim and the completing UPDATE; a replay, the upsert (no row changed) and a SELECT. */
    static final int STATEMENTS_PER_FIRST_EXECUTION = 2;
    /** Statements of a replay, as the dialect's Javadoc states. */
    static final int STATEMENTS_PER_REPLAY = 2;

    @Override
    protected int statementsPerFirstExecution() {
        return STATEMENTS_PER_FIRST_EXECUTION;
    }

    @Override
    protected int statementsPerReplay() {
        return STATEMENTS_PER_REPLAY;
    }

    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return true;
    }

    @Override
    protected void closeDataSource() throws Exception {
        pool.close();
        deleteDirectory(dir);
    }

    static void deleteDirectory(Path dir) throws IOException {
        if (dir != null) {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void theDatabaseRunsInWalModeWithABusyTimeout() throws Exception {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("PRAGMA journal_mode")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
            }
            try (ResultSet rs = s.executeQuery("PRAGMA busy_timeout")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(10_000);
            }
        }
    }

    @Test
    void theClaimsLockTimeoutLeavesTheConnectionsBusyTimeoutAsItWas() throws Exception {
        IdempotencyKey key = key("busy-timeout");
        Tx.commit(dataSource(), c -> {
            idem.execute(key, c, () -> "r");
            try (ResultSet rs = c.createStatement().executeQuery("PRAGMA busy_timeout")) {
                rs.next();
                return assertThat(rs.getInt(1)).isEqualTo(10_000);
            }
        });
    }

    @Test
    void keysThatDifferOnlyByATrailingSpaceAreDistinct() throws Exception {
        // The key policy refuses spaces, so this goes through the store's SPI.
        for (String id : new String[] {"k", "k ", "k  "}) {
            Claim claim = Tx.commit(dataSource(), c -> store.claim(c, new ClaimRequest(IdempotencyKey.of("exact", id),
                    Fingerprint.NONE, clock.instant(), clock.instant().plusSeconds(60), Duration.ofSeconds(1))));
            assertThat(claim).as("claim of '%s'", id).isInstanceOf(Claim.Acquired.class);
        }
        assertThat(records()).isEqualTo(3);
    }
}
