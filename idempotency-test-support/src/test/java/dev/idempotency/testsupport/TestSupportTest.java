package dev.idempotency.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class TestSupportTest {

    @Test
    void somethingMissingSkipsTheTestLocallyAndFailsItUnderCi() {
        Class<? extends Throwable> expected = TestEnvironment.underCi() ? AssertionFailedError.class : TestAbortedException.class;
        assertThatThrownBy(() -> TestEnvironment.require("IDEMPOTENCY_TEST_SUPPORT_NEVER_SET", "set it"))
                .isExactlyInstanceOf(expected).hasMessageStartingWith("IDEMPOTENCY_TEST_SUPPORT_NEVER_SET is not set: set it");
        assertThatThrownBy(() -> DatabaseServer.of("Nothing", "IDEMPOTENCY_TEST_SUPPORT_NEVER"))
                .isExactlyInstanceOf(expected)
                .hasMessageContaining("IDEMPOTENCY_TEST_SUPPORT_NEVER_URL is not set: run the suite with scripts/test");
    }

    @Test
    void aLazyPoolOpensOnFirstUseOnlyAndClosesWhatItOpened() throws Exception {
        AtomicInteger opened = new AtomicInteger();
        LazyPool unused = new LazyPool(() -> {
            opened.incrementAndGet();
            return TestDatabases.h2("lazy-unused");
        });
        unused.close();
        assertThat(opened).hasValue(0);

        LazyPool lazy = new LazyPool(() -> {
            opened.incrementAndGet();
            return TestDatabases.h2("lazy", 2);
        });
        HikariDataSource pool = lazy.get();
        assertThat(lazy.get()).isSameAs(pool);
        try (Connection c = pool.getConnection()) {
            assertThat(c.isValid(1)).isTrue();
        }
        lazy.close();
        assertThat(opened).hasValue(1);
        assertThat(pool.isClosed()).isTrue();
    }

    @Test
    void theSharedUrls() {
        assertThat(TestDatabases.h2Url("x")).isEqualTo("jdbc:h2:mem:x;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
        assertThat(TestDatabases.hsqldbUrl("x")).isEqualTo("jdbc:hsqldb:mem:x;hsqldb.tx=mvcc");
        assertThat(TestDatabases.sqliteUrl(Path.of("d", "f.db"), "&a=b"))
                .isEqualTo("jdbc:sqlite:" + Path.of("d", "f.db") + "?journal_mode=WAL&busy_timeout=10000&a=b");
    }

    @Test
    void aDatabaseDescriptorOpensItsPoolsAndStatesItsCostsOrSaysWhyNot() throws Exception {
        LazyPool lazy = TestDatabase.H2.lazyPool("descriptor", 2);
        try (Connection c = lazy.get().getConnection()) {
            assertThat(c.getMetaData().getURL()).isEqualTo("jdbc:h2:mem:descriptor");
        } finally {
            lazy.close();
        }
        assertThat(TestDatabase.Statements.keyByKey(3, 1)).isEqualTo(new TestDatabase.Statements(3, 1, 41, 20));
        assertThat(TestDatabase.SQLITE.isolationLevels()).isEmpty();
        assertThatThrownBy(TestDatabase.PARTITIONED_POSTGRES::statements).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no statement costs are stated for partitioned PostgreSQL");
        Path dir = java.nio.file.Files.createTempDirectory("idempotency-descriptor");
        java.nio.file.Files.writeString(dir.resolve("db.db"), "x");
        TestDatabase.deleteDirectory(dir);
        assertThat(dir).doesNotExist();
    }
}
