package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Isolation, time zones, lock timeout and cost on embedded H2. */
class H2IsolationTest extends AbstractIsolationTest {

    private HikariDataSource pool;

    @Override
    protected HikariDataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.h2("isolation");
        }
        return pool;
    }

    /** H2's REPEATABLE READ lets other transactions' new rows appear (phantoms); SERIALIZABLE does not. */
    @Override
    protected boolean staleSnapshotDuplicateConflicts(int isolation) {
        return isolation == Connection.TRANSACTION_SERIALIZABLE;
    }

    /**
     * Once this transaction has read the key's absence at REPEATABLE READ, H2 keeps showing it
     * absent, so a claim that waited for a concurrent one is a conflict there too.
     */
    @Override
    protected boolean waitedDuplicateConflicts(int isolation) {
        return isolation != Connection.TRANSACTION_READ_COMMITTED;
    }

    @Override
    protected String setSessionTimeZone() {
        return "SET TIME ZONE 'Asia/Kathmandu'";
    }

    @Override
    protected String showSessionTimeZone() {
        return "SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'TIME ZONE'";
    }

    /**
     * H2's query timeout is a session setting, shared by every statement of the connection; its
     * driver caches it, so it is set here through JDBC (a value set with SQL would be invisible to
     * {@code getQueryTimeout}, and so could not be restored).
     */
    @Override
    protected void setUnusualSessionSettings(Statement s) throws SQLException {
        s.setQueryTimeout(77);
        s.execute("SET LOCK_TIMEOUT 6666");
    }

    @Override
    protected String sessionSettingsQuery() {
        return "SELECT (SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'QUERY_TIMEOUT') AS QUERY_TIMEOUT,"
                + " LOCK_TIMEOUT() AS LOCK_TIMEOUT, (SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'TIME ZONE') AS TIME_ZONE";
    }

    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return true;
    }


}
