package dev.idempotency.jpms.test;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * Runs from the module path: checks that the library's classes live in the named modules
 * {@code dev.idempotency} and {@code dev.idempotency.jdbc}, then executes and replays one key on
 * H2 in memory. Exits with status 1 on any difference, so the build fails.
 */
public final class ModulePathCheck {

    private ModulePathCheck() {
    }

    /**
     * Runs the check.
     *
     * @param args ignored
     * @throws SQLException if H2 fails
     */
    public static void main(String[] args) throws SQLException {
        expectModule(ModulePathCheck.class, "dev.idempotency.jpms.test");
        expectModule(IdempotencyKey.class, "dev.idempotency");
        expectModule(Idempotent.class, "dev.idempotency.jdbc");
        // The nullness annotations are an optional dependency: a user's module runs without them.
        expect(ModuleLayer.boot().findModule("org.jspecify").isEmpty(), "org.jspecify is on the module path");

        IdempotencyKey key = IdempotencyKey.of("tenant-1", "order-42");
        try (Connection connection = DriverManager.getConnection("jdbc:h2:mem:jpms;DB_CLOSE_DELAY=-1")) {
            JdbcIdempotencyStore.ofDefaults().createTableIfMissing(connection);
            connection.setAutoCommit(false);
            Outcome<String> first = Idempotent.execute(key, connection, () -> "charged");
            connection.commit();
            Outcome<String> retry = Idempotent.execute(key, connection, () -> "charged twice");
            connection.commit();
            expect(first.status() == Outcome.Status.EXECUTED && "charged".equals(first.value()), "first: " + first);
            expect(retry.status() == Outcome.Status.REPLAYED && "charged".equals(retry.value()), "retry: " + retry);
            // Types whose components carry @Nullable compile here without the annotations.
            if (retry instanceof Outcome.Failed<String> failed) {
                expect(false, "replayed a failure: " + failed.errorMessage());
            }
        }
        System.out.println("module path: dev.idempotency and dev.idempotency.jdbc resolved; execute and replay on H2 passed");
    }

    private static void expectModule(Class<?> type, String name) {
        Module module = type.getModule();
        expect(module.isNamed() && name.equals(module.getName()),
                type.getName() + " is in module " + module + ", expected " + name);
    }

    private static void expect(boolean condition, String message) {
        if (!condition) {
            System.err.println("module path check failed: " + message);
            System.exit(1);
        }
    }
}
