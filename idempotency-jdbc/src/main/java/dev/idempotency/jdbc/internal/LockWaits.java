package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.LockWait;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The bounded lock waits, written once for every dialect: a statement that may wait for another
 * transaction's lock runs as the dialect's {@link LockWait} says. The drivers' own handles (pgjdbc's
 * millisecond query timeout, H2's embedded session) are reached by reflection, so that this library
 * needs neither driver at compile time.
 *
 * <p>Not an API: the dialects' own helper. Thread-safe; it caches the drivers' handles per class.
 */
final class LockWaits {

    private LockWaits() {
    }

    /**
     * Runs a statement that may wait for another transaction's lock, bounded by the lock timeout.
     *
     * @param d the dialect: its {@link dev.idempotency.jdbc.dialect.SqlDialect#lockWait()}, and its classification of a lock timeout
     * @param s the statement
     * @param timeout the lock timeout
     * @param execution runs it
     * @param <T> the result
     * @return what the execution returned
     * @throws SQLException if it fails, a lock timeout included
     */
    static <T> T run(JdbcExecutor d, PreparedStatement s, Duration timeout, Execution<T> execution) throws SQLException {
        switch (d.dialect().lockWait()) {
            case QUERY_TIMEOUT_MILLIS:
                return withMillisecondQueryTimeout(s, timeout, execution);
            case SESSION_LOCK_TIMEOUT:
                return withSessionLockTimeout(s, timeout, execution);
            case CANCEL:
                return cancelling(d, s, timeout, execution);
            default:
                return withQueryTimeout(s, timeout, execution);
        }
    }

    private static <T> T withQueryTimeout(PreparedStatement s, Duration timeout, Execution<T> execution)
            throws SQLException {
        long millis = timeout.toMillis();
        int seconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (millis + 999) / 1000));
        int previous = s.getQueryTimeout();
        s.setQueryTimeout(seconds);
        try {
            return execution.run();
        } finally {
            s.setQueryTimeout(previous);
        }
    }

    // ---- QUERY_TIMEOUT_MILLIS: pgjdbc ------------------------------------------------------------

    private static <T> T withMillisecondQueryTimeout(PreparedStatement s, Duration timeout, Execution<T> execution)
            throws SQLException {
        PreparedStatement physical = s.isWrapperFor(PreparedStatement.class) ? s.unwrap(PreparedStatement.class) : s;
        MillisecondTimeout ms = MILLISECONDS.get(physical.getClass());
        if (ms == MillisecondTimeout.NONE) {
            return withQueryTimeout(s, timeout, execution);
        }
        long previous = ms.get(physical);
        ms.set(physical, Math.max(1, timeout.toMillis()));
        try {
            return execution.run();
        } finally {
            ms.set(physical, previous);
        }
    }

    private static final ClassValue<MillisecondTimeout> MILLISECONDS = new ClassValue<>() {
        @Override
        protected MillisecondTimeout computeValue(Class<?> type) {
            return MillisecondTimeout.of(type);
        }
    };

    /**
     * pgjdbc's query timeout in milliseconds, per class of statement (its public
     * {@code getQueryTimeoutMs} and {@code setQueryTimeoutMs}); {@link #NONE} for other drivers.
     */
    private static final class MillisecondTimeout {
        static final MillisecondTimeout NONE = new MillisecondTimeout(null, null);

        private final MethodHandle getter;
        private final MethodHandle setter;

        private MillisecondTimeout(MethodHandle getter, MethodHandle setter) {
            this.getter = getter;
            this.setter = setter;
        }

        static MillisecondTimeout of(Class<?> statementType) {
            if (!statementType.getName().startsWith("org.postgresql.")) {
                return NONE;
            }
            try {
                MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                MethodHandle get = lookup.unreflect(statementType.getMethod("getQueryTimeoutMs"))
                        .asType(MethodType.methodType(long.class, PreparedStatement.class));
                MethodHandle set = lookup.unreflect(statementType.getMethod("setQueryTimeoutMs", long.class))
                        .asType(MethodType.methodType(void.class, PreparedStatement.class, long.class));
                return new MillisecondTimeout(get, set);
            } catch (ReflectiveOperationException | RuntimeException unavailable) {
                return NONE;
            }
        }

        long get(PreparedStatement s) throws SQLException {
            try {
                return (long) getter.invokeExact(s);
            } catch (SQLException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new SQLException("could not read the statement's query timeout", e);
            }
        }

        void set(PreparedStatement s, long millis) throws SQLException {
            try {
                setter.invokeExact(s, millis);
            } catch (SQLException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new SQLException("could not set the statement's query timeout", e);
            }
        }
    }

    // ---- SESSION_LOCK_TIMEOUT: H2's embedded session ---------------------------------------------

    private static <T> T withSessionLockTimeout(PreparedStatement s, Duration timeout, Execution<T> execution)
            throws SQLException {
        Connection physical = physical(s.getConnection());
        EmbeddedSession session = EMBEDDED.get(physical.getClass());
        Object local = session.of(physical);
        if (local == null) {
            return withQueryTimeout(s, timeout, execution);
        }
        int previous = session.lockTimeout(local);
        session.lockTimeout(local, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try {
            return execution.run();
        } finally {
            session.lockTimeout(local, previous);
        }
    }

    /**
     * @param c a connection, possibly a pool's proxy
     * @return whether it is a session of an H2 database embedded in this process
     * @throws SQLException if the connection cannot be unwrapped
     */
    static boolean isEmbeddedH2(Connection c) throws SQLException {
        Connection physical = physical(c);
        return EMBEDDED.get(physical.getClass()).of(physical) != null;
    }

    /** @return the driver's own connection behind a pool's proxy */
    private static Connection physical(Connection c) throws SQLException {
        return c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
    }

    /** How to reach the lock timeout of an embedded H2 session, per class of connection. */
    private static final ClassValue<EmbeddedSession> EMBEDDED = new ClassValue<>() {
        @Override
        protected EmbeddedSession computeValue(Class<?> type) {
            return EmbeddedSession.of(type);
        }
    };

    /**
     * H2's public session API: {@code JdbcConnection.getSession()}, and on a {@code SessionLocal}
     * (an embedded database) {@code getLockTimeout()} and {@code setLockTimeout(int)}, which also
     * applies to the open transaction. Any other connection or session (H2's TCP client, another H2
     * version without these methods) has no handles, and the query timeout is used.
     */
    private static final class EmbeddedSession {
        private static final EmbeddedSession NONE = new EmbeddedSession(null, null, null, null);

        private final Class<?> sessionLocal;
        private final MethodHandle getSession;
        private final MethodHandle getLockTimeout;
        private final MethodHandle setLockTimeout;

        private EmbeddedSession(Class<?> sessionLocal, MethodHandle getSession, MethodHandle getLockTimeout,
                                MethodHandle setLockTimeout) {
            this.sessionLocal = sessionLocal;
            this.getSession = getSession;
            this.getLockTimeout = getLockTimeout;
            this.setLockTimeout = setLockTimeout;
        }

        /**
         * @param type a connection's class: H2's {@code JdbcConnection} or a subclass of it (H2's own
         *     pool, {@code JdbcConnectionPool}, hands out one whose {@code unwrap} returns itself)
         */
        static EmbeddedSession of(Class<?> type) {
            Class<?> connectionType = type;
            while (connectionType != null && !"org.h2.jdbc.JdbcConnection".equals(connectionType.getName())) {
                connectionType = connectionType.getSuperclass();
            }
            if (connectionType == null) {
                return NONE;
            }
            try {
                MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                Class<?> sessionLocal = Class.forName("org.h2.engine.SessionLocal", false, connectionType.getClassLoader());
                MethodHandle getSession = lookup.unreflect(connectionType.getMethod("getSession"))
                        .asType(MethodType.methodType(Object.class, Connection.class));
                MethodHandle get = lookup.findVirtual(sessionLocal, "getLockTimeout", MethodType.methodType(int.class))
                        .asType(MethodType.methodType(int.class, Object.class));
                MethodHandle set = lookup.findVirtual(sessionLocal, "setLockTimeout", MethodType.methodType(void.class, int.class))
                        .asType(MethodType.methodType(void.class, Object.class, int.class));
                return new EmbeddedSession(sessionLocal, getSession, get, set);
            } catch (ReflectiveOperationException | RuntimeException unavailable) {
                return NONE;
            }
        }

        /** @return the connection's embedded session, or {@code null} if it has none */
        Object of(Connection physical) {
            if (getSession == null) {
                return null;
            }
            try {
                Object session = (Object) getSession.invokeExact(physical);
                return sessionLocal.isInstance(session) ? session : null;
            } catch (Throwable unavailable) {
                return null;
            }
        }

        int lockTimeout(Object session) {
            try {
                return (int) getLockTimeout.invokeExact(session);
            } catch (Throwable e) {
                throw new IllegalStateException("could not read the H2 session's lock timeout", e);
            }
        }

        void lockTimeout(Object session, int millis) {
            try {
                setLockTimeout.invokeExact(session, millis);
            } catch (Throwable e) {
                throw new IllegalStateException("could not set the H2 session's lock timeout", e);
            }
        }
    }

    // ---- CANCEL: a timer ---------------------------------------------------------------------------

    private static <T> T cancelling(JdbcExecutor d, PreparedStatement s, Duration timeout, Execution<T> execution)
            throws SQLException {
        Canceller canceller = new Canceller(s);
        ScheduledFuture<?> timer = Timer.INSTANCE.schedule(canceller, Math.max(1000, timeout.toMillis()), TimeUnit.MILLISECONDS);
        boolean cancelHit = false;
        try {
            return execution.run();
        } catch (SQLException e) {
            cancelHit = d.isLockTimeout(e);
            throw e;
        } finally {
            timer.cancel(false);
            if (canceller.stop() && !cancelHit) {
                try (Statement absorb = s.getConnection().createStatement()) {
                    absorb.execute(d.dialect().noOpStatement());
                } catch (SQLException ignored) {
                    // normally the dialect's lock timeout: the late cancel is spent on it
                }
            }
        }
    }

    /**
     * The timer that cancels statements whose lock wait ran out: one daemon thread shared by all
     * dialects, started on first use (busy pools elsewhere cannot delay it).
     */
    private static final class Timer {
        static final ScheduledExecutorService INSTANCE = create();

        private static ScheduledExecutorService create() {
            ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "idempotency-lock-timeout");
                t.setDaemon(true);
                return t;
            });
            timer.setRemoveOnCancelPolicy(true); // a claim that did not wait leaves nothing queued
            return timer;
        }
    }

    /** Cancels a statement once, unless stopped first. */
    private static final class Canceller implements Runnable {
        private final Statement statement;
        private boolean stopped;
        private boolean fired;

        Canceller(Statement statement) {
            this.statement = statement;
        }

        @Override
        public synchronized void run() {
            if (!stopped) {
                fired = true;
                try {
                    statement.cancel();
                } catch (SQLException ignored) {
                    // the statement has ended; nothing to cancel
                }
            }
        }

        /** @return whether the cancel was sent */
        synchronized boolean stop() {
            stopped = true;
            return fired;
        }
    }
}
