package dev.idempotency.jdbc.dialect;

/**
 * How a dialect bounds a statement's wait for another transaction's lock by the policy's lock
 * timeout: the dialect names one ({@link SqlDialect#lockWait()}), and the store runs it, the same
 * for every dialect that names it. A wait that runs out fails the statement with an error that the
 * dialect's {@link SqlDialect#isLockTimeout} recognises.
 *
 * <p>A dialect that bounds a wait in the SQL text itself (PostgreSQL's claim statement sets
 * {@code lock_timeout} for its own run) does so in the statement it gives; the other statements
 * that can wait use the strategy named here.
 */
public enum LockWait {

    /**
     * {@link java.sql.Statement#setQueryTimeout}, in whole seconds, rounded up (zero waits one
     * second, as JDBC reads zero as "no limit"); the statement's previous timeout is set back
     * afterwards (on H2 the query timeout is a session setting of the caller's). Some drivers turn it
     * into a setting of the statement alone (MariaDB Connector/J 3 sends
     * {@code SET STATEMENT max_statement_time=N FOR ...}; sqlite-jdbc the busy timeout). The default.
     */
    QUERY_TIMEOUT,

    /**
     * The driver's query timeout in milliseconds, where the statement is pgjdbc's
     * ({@code PgStatement.setQueryTimeoutMs}, a cancelling timer; zero waits one millisecond), its
     * previous value set back afterwards; {@link #QUERY_TIMEOUT} on another driver.
     */
    QUERY_TIMEOUT_MILLIS,

    /**
     * The session's lock timeout, in milliseconds (zero waits for no lock), set in memory for the
     * statement and set back afterwards, where the connection is an embedded H2 session
     * ({@code SessionLocal.setLockTimeout}, whatever pool is in front of it); {@link #QUERY_TIMEOUT}
     * on another connection, such as H2's TCP client.
     */
    SESSION_LOCK_TIMEOUT,

    /**
     * The statement is cancelled ({@link java.sql.Statement#cancel}) when the timeout runs out (at
     * least one second, so that a statement that does not wait is never cancelled), from one daemon
     * timer thread, for a database that ignores the query timeout while a statement waits (HSQLDB).
     * A cancel that arrives just after the statement ended would abort the connection's next
     * statement instead, so it is spent on the dialect's {@link SqlDialect#noOpStatement()}.
     */
    CANCEL
}
