package dev.idempotency.jdbc;

/**
 * What a {@link JdbcIdempotencyStore} does when the database acknowledges commits before they are
 * durable ({@link dev.idempotency.jdbc.dialect.SqlDialect#nonDurableCommits}). A record is only as
 * durable as the commit that wrote it: a commit lost after it returned takes the key's record with
 * it, and the retry runs the work again.
 *
 * <p>The settings differ in what it takes to lose a commit. An embedded H2 file database with its
 * default {@code WRITE_DELAY} (500 ms) lives inside the application's process, so every crash of the
 * application (a kill, an out-of-memory kill, a container stopped hard) loses the commits of its last
 * moments: {@link #REFUSE_EMBEDDED}, the default, refuses it. A database server's setting
 * (PostgreSQL's {@code fsync=off} or {@code synchronous_commit=off}, MariaDB's
 * {@code innodb_flush_log_at_trx_commit} other than 1, SQLite's {@code synchronous=OFF}) loses
 * commits only when the server or its machine crashes, and is an operator's choice: the default
 * warns once, through SLF4J and {@link dev.idempotency.IdempotencyListener#onNonDurableCommits}.
 */
public enum DurabilityCheck {

    /** Refuse every database that acknowledges commits before they are durable, with {@link NonDurableCommitsException}. */
    REFUSE_ANY,

    /**
     * The default: refuse a database whose acknowledged commits are lost when the application's own
     * process dies (an embedded H2 file database with {@code WRITE_DELAY} above 0); warn once about
     * any other setting that acknowledges commits before they are durable.
     */
    REFUSE_EMBEDDED,

    /**
     * Warn once and go on, whatever the setting: for tests and throwaway databases, where a crash
     * that loses commits (and runs their work again on a retry) is acceptable.
     */
    WARN_ONLY;

    /** @return whether this check refuses a database with the answer given */
    boolean refuses(boolean lostWithTheApplication) {
        return this == REFUSE_ANY || (this == REFUSE_EMBEDDED && lostWithTheApplication);
    }
}
