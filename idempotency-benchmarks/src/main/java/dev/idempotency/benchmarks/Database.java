package dev.idempotency.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import java.util.Locale;
import java.util.UUID;

/**
 * The databases the benchmarks run on, each reached through a HikariCP pool. PostgreSQL and
 * MariaDB are the servers named by {@code IDEMPOTENCY_PG_URL} and {@code IDEMPOTENCY_MARIADB_URL}
 * (with {@code _USER} and {@code _PASSWORD}), as for the tests; the embedded ones live in memory or
 * in a temporary directory.
 */
enum Database {

    /** H2 in memory. */
    H2_MEM("h2mem", "H2 (memory)") {
        @Override
        String url(Path dir) {
            return "jdbc:h2:mem:bench-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
        }
    },
    /**
     * H2 on a file (MVStore; H2 does not sync to disk at each commit), written at each commit
     * ({@code WRITE_DELAY=0}), as the store requires of an embedded database by default.
     */
    H2_FILE("h2file", "H2 (file)") {
        @Override
        String url(Path dir) {
            return "jdbc:h2:file:" + dir.resolve("bench") + ";WRITE_DELAY=0;LOCK_TIMEOUT=10000";
        }
    },
    /**
     * SQLite on a file: WAL journal, {@code synchronous=NORMAL} (no sync at each commit, like the
     * servers below, whose fsync is off), through a pool of one connection (SQLite has a single
     * writer), on which concurrent transactions queue.
     */
    SQLITE("sqlite", "SQLite (file)") {
        @Override
        String url(Path dir) {
            return "jdbc:sqlite:" + dir.resolve("bench.db")
                    + "?journal_mode=WAL&synchronous=NORMAL&busy_timeout=30000";
        }
    },
    /** The PostgreSQL server of the environment. */
    POSTGRESQL("postgresql", "PostgreSQL") {
        @Override
        String url(Path dir) {
            return server("IDEMPOTENCY_PG", "URL");
        }
    },
    /** The MariaDB server of the environment. */
    MARIADB("mariadb", "MariaDB") {
        @Override
        String url(Path dir) {
            return server("IDEMPOTENCY_MARIADB", "URL");
        }
    };

    /** Threads of the contention benchmarks; the pools (but SQLite's) hold one connection more. */
    static final int THREADS = 16;

    private final String id;
    private final String title;

    Database(String id, String title) {
        this.id = id;
        this.title = title;
    }

    /** @return the name used in {@code @Param} values and on the command line */
    String id() {
        return id;
    }

    /** @return the name shown in the report */
    String title() {
        return title;
    }

    /** @return whether it needs a server from the environment */
    boolean isServer() {
        return this == POSTGRESQL || this == MARIADB;
    }

    /**
     * @param id a name as in {@link #id()}
     * @return the database
     * @throws IllegalArgumentException naming the known ones
     */
    static Database byId(String id) {
        for (Database d : values()) {
            if (d.id.equalsIgnoreCase(id.strip())) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown database '" + id + "'; known: h2mem, h2file, sqlite, postgresql, mariadb");
    }

    abstract String url(Path dir);

    /**
     * @param dir a directory for the file-based engines
     * @return a pool with auto-commit off, large enough for the contention benchmarks
     * @throws IllegalStateException if a server's URL is missing from the environment
     */
    HikariDataSource pool(Path dir) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("bench-" + id);
        config.setJdbcUrl(url(dir));
        if (isServer()) {
            String prefix = this == POSTGRESQL ? "IDEMPOTENCY_PG" : "IDEMPOTENCY_MARIADB";
            config.setUsername(System.getenv(prefix + "_USER"));
            config.setPassword(System.getenv(prefix + "_PASSWORD"));
        }
        config.setAutoCommit(false);
        // SQLite has one writer at a time: one connection, on which concurrent transactions queue.
        int size = this == SQLITE ? 1 : THREADS + 1;
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setConnectionTimeout(60_000);
        return new HikariDataSource(config);
    }

    String server(String prefix, String part) {
        String value = System.getenv(prefix + "_" + part);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(prefix + "_URL is not set, so the " + title + " benchmarks cannot run. Export "
                    + prefix + "_URL, " + prefix + "_USER and " + prefix + "_PASSWORD (scripts/db-servers.sh start prints"
                    + " them for throwaway servers), or leave " + id.toLowerCase(Locale.ROOT) + " out of the run");
        }
        return value;
    }
}
