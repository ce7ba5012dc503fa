package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyStoreException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the dialect for a connection from its {@link DatabaseMetaData}: the one point where the
 * database is detected. Each detection is logged once per product and version. Pass a dialect to
 * {@code JdbcIdempotencyStore.Builder#dialect} to skip detection.
 *
 * <p>Thread-safe. Detected dialects are cached by product name and version (a cache of stateless
 * dialects, not configuration).
 */
public final class Dialects {

    private static final Logger log = LoggerFactory.getLogger(Dialects.class);
    private static final Map<String, SqlDialect> DETECTED = new ConcurrentHashMap<>();

    private Dialects() {
    }

    /**
     * @param connection an open connection; only its metadata is read
     * @return the dialect for its database
     * @throws SQLException if the metadata cannot be read
     * @throws UnsupportedDatabaseException if no dialect supports the database
     */
    public static SqlDialect detect(Connection connection) throws SQLException {
        DatabaseMetaData meta = connection.getMetaData();
        String product = meta.getDatabaseProductName();
        String version = meta.getDatabaseProductVersion();
        String cacheKey = product + " " + version;
        SqlDialect known = DETECTED.get(cacheKey);
        if (known != null) {
            return known;
        }
        SqlDialect dialect = forProduct(product, version);
        if (DETECTED.putIfAbsent(cacheKey, dialect) == null) {
            log.info("Detected {} {}: using the {}", product, version, dialect);
        }
        return dialect;
    }

    /**
     * @param product {@link DatabaseMetaData#getDatabaseProductName()}
     * @param version {@link DatabaseMetaData#getDatabaseProductVersion()}
     * @return the dialect for that database
     * @throws UnsupportedDatabaseException if none supports it
     */
    public static SqlDialect forProduct(String product, String version) {
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.equals("h2")) {
            return new H2Dialect();
        }
        if (p.equals("postgresql")) {
            return new PostgresDialect();
        }
        if (p.equals("mariadb") || p.equals("mysql")) {
            return new MariaDbDialect();
        }
        if (p.equals("sqlite")) {
            return new SqliteDialect();
        }
        if (p.startsWith("hsql")) {
            return new HsqldbDialect();
        }
        throw new UnsupportedDatabaseException(product, version);
    }

    /** No dialect supports the connection's database. */
    public static final class UnsupportedDatabaseException extends IdempotencyStoreException {
        private static final long serialVersionUID = 1L;

        UnsupportedDatabaseException(String product, String version) {
            super(null, "No idempotency dialect for database '" + product + "' version '" + version
                    + "'. Supported: H2, PostgreSQL, MariaDB, MySQL, SQLite, HSQLDB. Pass a SqlDialect to JdbcIdempotencyStore.builder().dialect(...) to choose one.", null);
        }
    }
}
