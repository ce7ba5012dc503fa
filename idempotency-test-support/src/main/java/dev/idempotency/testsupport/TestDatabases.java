package dev.idempotency.testsupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;

/**
 * Pooled data sources (HikariCP) on every database the tests run against, and the URLs the suites
 * share. Embedded engines are created here; PostgreSQL and MariaDB are the servers of the
 * environment ({@link DatabaseServer}): without them a test is skipped, or fails under CI.
 */
public final class TestDatabases {

    /** The pool size the suites use unless they say otherwise. */
    public static final int POOL_SIZE = 24;

    private TestDatabases() {
    }

    /**
     * @param name a database name unique to the caller
     * @return an in-memory H2 database kept while the JVM runs, waiting up to 10 s for a lock
     */
    public static String h2Url(String name) {
        return "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    }

    /** @param name a database name unique to the caller @return a pool on {@link #h2Url(String)} */
    public static HikariDataSource h2(String name) {
        return h2(name, POOL_SIZE);
    }

    /** @param name a database name unique to the caller @param size the pool size @return a pool on {@link #h2Url(String)} */
    public static HikariDataSource h2(String name, int size) {
        return pool(h2Url(name), null, null, size);
    }

    /** @param name a database name unique to the caller @return an in-memory HSQLDB database in MVCC mode */
    public static String hsqldbUrl(String name) {
        return "jdbc:hsqldb:mem:" + name + ";hsqldb.tx=mvcc";
    }

    /** @param name a database name unique to the caller @param size the pool size @return a pool on {@link #hsqldbUrl(String)} as {@code SA} */
    public static HikariDataSource hsqldb(String name, int size) {
        return pool(hsqldbUrl(name), "SA", "", size);
    }

    /**
     * @param file the database file
     * @param extra further URL parameters, each starting with {@code &}, or empty
     * @return a SQLite URL on {@code file} in write-ahead-log mode, waiting up to 10 s for the write lock
     */
    public static String sqliteUrl(Path file, String extra) {
        return "jdbc:sqlite:" + file + "?journal_mode=WAL&busy_timeout=10000" + extra;
    }

    /** @return a pool on the PostgreSQL server of the environment */
    public static HikariDataSource postgres() {
        return postgres(POOL_SIZE);
    }

    /** @param size the pool size @return a pool on the PostgreSQL server of the environment */
    public static HikariDataSource postgres(int size) {
        return DatabaseServer.postgres().pool(size);
    }

    /** @return a pool on the MariaDB server of the environment */
    public static HikariDataSource mariadb() {
        return mariadb(POOL_SIZE);
    }

    /** @param size the pool size @return a pool on the MariaDB server of the environment */
    public static HikariDataSource mariadb(int size) {
        return DatabaseServer.mariadb().pool(size);
    }

    /**
     * @param url a JDBC URL
     * @param user the user, or {@code null}
     * @param password the password, or {@code null}
     * @param size the pool size
     * @return a pool that waits up to 30 s for a connection
     */
    public static HikariDataSource pool(String url, String user, String password, int size) {
        return new HikariDataSource(config(url, user, password, size));
    }

    /**
     * @param url a JDBC URL
     * @param user the user, or {@code null}
     * @param password the password, or {@code null}
     * @param size the pool size
     * @return the configuration of {@link #pool(String, String, String, int)}, for a caller to change before it opens the pool
     */
    public static HikariConfig config(String url, String user, String password, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        if (user != null) {
            config.setUsername(user);
            config.setPassword(password);
        }
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(30_000);
        return config;
    }
}
