package dev.idempotency.jdbc;

import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.JdbcExecutor;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import org.jspecify.annotations.Nullable;

/**
 * A transaction that {@link JdbcTransactions} runs, from its begin to its commit or rollback: the
 * connection handed to the work is a wrapper of the data source's connection that carries it, so
 * that {@link JdbcIdempotencyStore} knows the library runs the transaction, and what the commit
 * must send first: the completion that {@link JdbcIdempotencyStore#complete} left to travel with the
 * {@code COMMIT} (where the dialect sends both in one round trip), or the write-last record that
 * {@link JdbcIdempotencyStore#writeLast} left to it. A caller's own connection carries none: on it,
 * the store records the result at once.
 *
 * <p>The wrapper passes every call to the data source's connection, {@code unwrap} and
 * {@code isWrapperFor} included (so a pool's proxy and the driver's connection are reached as
 * before); it equals only itself.
 *
 * <p>Used by one thread at a time, the transaction's.
 */
final class OwnedTransaction implements InvocationHandler {

    private final Connection connection;
    private final Connection wrapper;
    private boolean open = true;
    private @Nullable JdbcExecutor dialect;
    private @Nullable TableName table;
    private @Nullable Completion completion;
    private @Nullable ClaimRequest writeLast;

    private OwnedTransaction(Connection connection) {
        this.connection = connection;
        this.wrapper = (Connection) Proxy.newProxyInstance(OwnedTransaction.class.getClassLoader(),
                new Class<?>[] {Connection.class}, this);
    }

    /**
     * @param connection a connection whose transaction {@link JdbcTransactions} has just begun
     * @return the transaction
     */
    static OwnedTransaction begin(Connection connection) {
        return new OwnedTransaction(connection);
    }

    /** @return the connection to hand to the work: the data source's, wrapped so that it carries this transaction */
    Connection connection() {
        return wrapper;
    }

    /**
     * @param c a connection
     * @return the transaction it carries while {@link JdbcTransactions} runs it (until its commit
     *     begins, or it is rolled back), else {@code null}
     */
    static @Nullable OwnedTransaction of(Connection c) {
        if (Proxy.isProxyClass(c.getClass()) && Proxy.getInvocationHandler(c) instanceof OwnedTransaction owned && owned.open) {
            return owned;
        }
        return null;
    }

    /** Ends the transaction for the store: from now on its connection is no longer the library's. */
    void end() {
        open = false;
    }

    /** @return whether a completion waits for the commit */
    boolean hasPending() {
        return completion != null;
    }

    JdbcExecutor dialect() {
        return dialect;
    }

    TableName table() {
        return table;
    }

    Completion completion() {
        return completion;
    }

    /** @return the request of a write-last record that waits for the commit, or {@code null} for a completion */
    @Nullable ClaimRequest writeLast() {
        return writeLast;
    }

    void defer(JdbcExecutor d, TableName t, Completion c) {
        dialect = d;
        table = t;
        completion = c;
    }

    /** Forgets the deferred completion, once it has been sent. */
    void clear() {
        dialect = null;
        table = null;
        completion = null;
        writeLast = null;
    }

    void deferWriteLast(JdbcExecutor d, TableName t, ClaimRequest r, Completion c) {
        defer(d, t, c);
        writeLast = r;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        switch (method.getName()) {
            case "equals":
                if (method.getParameterCount() == 1 && method.getParameterTypes()[0] == Object.class) {
                    return proxy == args[0];
                }
                break;
            case "hashCode":
                if (method.getParameterCount() == 0) {
                    return System.identityHashCode(proxy);
                }
                break;
            default:
                break;
        }
        try {
            return method.invoke(connection, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
