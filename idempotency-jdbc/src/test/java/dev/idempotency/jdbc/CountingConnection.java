package dev.idempotency.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/** Test helper: a connection that counts every statement execution made through it. */
final class CountingConnection {

    private CountingConnection() {
    }

    /**
     * @param target the connection to wrap
     * @param counter incremented at every {@code execute*} call of a statement created through it
     * @return the counting connection
     */
    static Connection wrap(Connection target, AtomicInteger counter) {
        Connection[] self = new Connection[1];
        self[0] = (Connection) Proxy.newProxyInstance(CountingConnection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(target, method, args);
                    if (result instanceof Statement statement) {
                        Class<?> type = statement instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
                        InvocationHandler counted = (p, m, a) -> {
                            if (m.getName().equals("getConnection")) {
                                return self[0]; // a statement made through the statement's connection is counted too
                            }
                            if (m.getName().startsWith("execute")) {
                                counter.incrementAndGet();
                            }
                            return invoke(statement, m, a);
                        };
                        return Proxy.newProxyInstance(CountingConnection.class.getClassLoader(), new Class<?>[] {type}, counted);
                    }
                    return result;
                });
        return self[0];
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
