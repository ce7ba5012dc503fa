package dev.idempotency.testsupport;

import com.zaxxer.hikari.HikariDataSource;

/**
 * A database server of the environment, named by {@code <prefix>_URL}, {@code _USER} and
 * {@code _PASSWORD}, which {@code scripts/test} starts and exports. Without the URL the calling test
 * is skipped, or fails under CI (see {@link TestEnvironment}).
 *
 * @param name for messages: PostgreSQL, MariaDB
 * @param prefix the variables' prefix: {@code IDEMPOTENCY_PG}, {@code IDEMPOTENCY_MARIADB}
 * @param url the JDBC URL
 * @param user the user, or {@code null}
 * @param password the password, or {@code null}
 */
public record DatabaseServer(String name, String prefix, String url, String user, String password) {

    /** @return the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}, ...) */
    public static DatabaseServer postgres() {
        return of("PostgreSQL", "IDEMPOTENCY_PG");
    }

    /** @return the MariaDB server of the environment ({@code IDEMPOTENCY_MARIADB_URL}, ...) */
    public static DatabaseServer mariadb() {
        return of("MariaDB", "IDEMPOTENCY_MARIADB");
    }

    /**
     * @param name for messages
     * @param prefix the variables' prefix
     * @return the server the variables name
     */
    public static DatabaseServer of(String name, String prefix) {
        String url = TestEnvironment.require(prefix + "_URL", "run the suite with scripts/test, which starts the server,"
                + " or set " + prefix + "_URL, _USER and _PASSWORD to a server of your own");
        return new DatabaseServer(name, prefix, url, TestEnvironment.get(prefix + "_USER"), TestEnvironment.get(prefix + "_PASSWORD"));
    }

    /**
     * @param size the pool size
     * @return a new pool on this server
     */
    public HikariDataSource pool(int size) {
        return TestDatabases.pool(url, user, password, size);
    }

    /** @return the name and URL, not the password */
    @Override
    public String toString() {
        return name + " at " + url;
    }
}
