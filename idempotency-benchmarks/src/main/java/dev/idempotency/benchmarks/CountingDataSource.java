package dev.idempotency.benchmarks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Wraps a {@link DataSource} so that every statement execution ({@code execute},
 * {@code executeQuery}, {@code executeUpdate}, {@code executeBatch}, ...), savepoint call, commit
 * and rollback made through its connections is counted, and timed by the kind of statement.
 * Used by the counting pass only, never in a timed benchmark. Not thread-safe: one thread at a time.
 */
final class CountingDataSource {

    private long statements;
    private long savepointCalls;
    private long commits;
    private long rollbacks;
    private final List<String> trace = new ArrayList<>();
    private final Map<String, long[]> timeByKind = new TreeMap<>();

    /**
     * @param target the data source to count
     * @return a data source whose connections report here
     */
    DataSource wrap(DataSource target) {
        return proxy(DataSource.class, target, (Timed) (method, args, invoker) -> {
            Object result = invoker.invoke();
            return method.getName().equals("getConnection") ? connection((Connection) result) : result;
        });
    }

    /** Starts counting afresh. */
    void reset() {
        statements = 0;
        savepointCalls = 0;
        commits = 0;
        rollbacks = 0;
        trace.clear();
        timeByKind.clear();
    }

    /** @return statement executions since the last reset */
    long statements() {
        return statements;
    }

    /** @return savepoint calls (set, roll back to, release) since the last reset */
    long savepointCalls() {
        return savepointCalls;
    }

    /** @return commits since the last reset */
    long commits() {
        return commits;
    }

    /** @return full rollbacks since the last reset */
    long rollbacks() {
        return rollbacks;
    }

    /** @return what ran since the last reset, in order: statement kinds, savepoint calls, commits */
    List<String> trace() {
        return List.copyOf(trace);
    }

    /** @return for each kind of call: {count, total nanoseconds} since the last reset */
    Map<String, long[]> timeByKind() {
        return timeByKind;
    }

    private Connection connection(Connection target) {
        return proxy(Connection.class, target, new Timed() {
            @Override
            public Object call(Method method, Object[] args, Invoker invoker) throws Throwable {
                String name = method.getName();
                switch (name) {
                    case "commit" -> {
                        commits++;
                        return timed("COMMIT", invoker);
                    }
                    case "rollback" -> {
                        if (args == null || args.length == 0) {
                            rollbacks++;
                            return timed("ROLLBACK", invoker);
                        }
                        savepointCalls++;
                        return timed("ROLLBACK TO SAVEPOINT", invoker);
                    }
                    case "setSavepoint" -> {
                        savepointCalls++;
                        return timed("SAVEPOINT", invoker);
                    }
                    case "releaseSavepoint" -> {
                        savepointCalls++;
                        return timed("RELEASE SAVEPOINT", invoker);
                    }
                    case "prepareStatement", "prepareCall" -> {
                        String sql = (String) args[0];
                        Object made = invoker.invoke();
                        Class<?> type = name.equals("prepareCall") ? CallableStatement.class : PreparedStatement.class;
                        return statement(type, (Statement) made, sql);
                    }
                    case "createStatement" -> {
                        return statement(Statement.class, (Statement) invoker.invoke(), null);
                    }
                    default -> {
                        return invoker.invoke();
                    }
                }
            }
        });
    }

    private Object statement(Class<?> type, Statement target, String preparedSql) {
        return proxy(type, target, new Timed() {
            @Override
            public Object call(Method method, Object[] args, Invoker invoker) throws Throwable {
                if (!method.getName().startsWith("execute")) {
                    return invoker.invoke();
                }
                statements++;
                String sql = args != null && args.length > 0 && args[0] instanceof String s ? s : preparedSql;
                return timed(kind(sql), invoker);
            }
        });
    }

    private Object timed(String kind, Invoker invoker) throws Throwable {
        trace.add(kind);
        long start = System.nanoTime();
        try {
            return invoker.invoke();
        } finally {
            long[] entry = timeByKind.computeIfAbsent(kind, k -> new long[2]);
            entry[0]++;
            entry[1] += System.nanoTime() - start;
        }
    }

    /** @param sql a statement @return its first word, upper case: SELECT, INSERT, UPDATE, DELETE, ... */
    static String kind(String sql) {
        if (sql == null) {
            return "?";
        }
        String s = sql.strip();
        int end = 0;
        while (end < s.length() && Character.isLetter(s.charAt(end))) {
            end++;
        }
        return s.substring(0, end).toUpperCase(Locale.ROOT);
    }

    /** A call through the proxy, to run the real method. */
    @FunctionalInterface
    private interface Invoker {
        Object invoke() throws Throwable;
    }

    /** Decides what a proxied call does. */
    @FunctionalInterface
    private interface Timed {
        Object call(Method method, Object[] args, Invoker invoker) throws Throwable;
    }

    private static <T> T proxy(Class<T> type, Object target, Timed handler) {
        InvocationHandler h = (p, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> p == args[0];
                    case "hashCode" -> System.identityHashCode(p);
                    default -> "Counting[" + target + "]";
                };
            }
            return handler.call(method, args, () -> {
                try {
                    return method.invoke(target, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
        };
        return type.cast(Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(), new Class<?>[] {type}, h));
    }
}
