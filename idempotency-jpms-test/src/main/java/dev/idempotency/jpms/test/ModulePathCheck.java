package dev.idempotency.jpms.test;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbi.JdbiIdempotency;
import java.sql.Connection;
import java.sql.DriverManager;
import java.lang.module.ModuleDescriptor;
import java.sql.SQLException;
import java.util.Set;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Runs from the module path: checks that the library's classes live in the named modules
 * {@code dev.idempotency}, {@code dev.idempotency.jdbc}, {@code dev.idempotency.jdbi} and
 * {@code dev.idempotency.http}, explicit modules that export their API and SPI packages and no
 * {@code internal} one, then executes and replays one key on H2 in memory, and replays it once more
 * through the Jdbi adapter. Exits with status 1 on any difference, so the build fails.
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
        // Explicit modules that export their API and SPI, and nothing internal.
        expectExports(IdempotencyKey.class.getModule(), Set.of("dev.idempotency", "dev.idempotency.spi"));
        expectExports(Idempotent.class.getModule(),
                Set.of("dev.idempotency.jdbc", "dev.idempotency.jdbc.dialect"));
        expectModule(JdbiIdempotency.class, "dev.idempotency.jdbi");
        expectExports(JdbiIdempotency.class.getModule(), Set.of("dev.idempotency.jdbi"));
        expectModule(HttpIdempotency.class, "dev.idempotency.http");
        expectExports(HttpIdempotency.class.getModule(), Set.of("dev.idempotency.http"));
        // Read by its descriptor, no class loaded: the Jakarta APIs it compiles against are the container's, absent here.
        Module jakarta = ModuleLayer.boot().findModule("dev.idempotency.jakarta").orElse(null);
        expect(jakarta != null, "dev.idempotency.jakarta is not on the module path");
        expectExports(jakarta, Set.of("dev.idempotency.jakarta.transaction", "dev.idempotency.jakarta.servlet"));
        expect(ModuleLayer.boot().findModule("jakarta.servlet").isEmpty(), "jakarta.servlet is on the module path");
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
        // The same key replays through the Jdbi adapter, whose handle is on the same database.
        Jdbi jdbi = Jdbi.create("jdbc:h2:mem:jpms;DB_CLOSE_DELAY=-1");
        Idempotency<Handle> handles = JdbiIdempotency.ofDefaults();
        Outcome<String> throughJdbi = jdbi.inTransaction(handle -> handles.execute(key, handle, () -> "charged by Jdbi"));
        expect(throughJdbi.status() == Outcome.Status.REPLAYED && "charged".equals(throughJdbi.value()), "through Jdbi: " + throughJdbi);
        System.out.println("module path: dev.idempotency, dev.idempotency.jdbc, dev.idempotency.jdbi, dev.idempotency.http and dev.idempotency.jakarta resolved, internals not exported; execute and replay on H2, and through Jdbi, passed");
    }

    private static void expectModule(Class<?> type, String name) {
        Module module = type.getModule();
        expect(module.isNamed() && name.equals(module.getName()),
                type.getName() + " is in module " + module + ", expected " + name);
    }

    private static void expectExports(Module module, Set<String> api) {
        ModuleDescriptor descriptor = module.getDescriptor();
        expect(!descriptor.isAutomatic(), module.getName() + " is an automatic module: its jar has no module-info");
        Set<String> unqualified = descriptor.exports().stream().filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        expect(unqualified.equals(api), module.getName() + " exports " + unqualified + ", expected " + api);
        // A package opened for its resources (the DDL files) counts as exported at run time.
        Set<String> opened = descriptor.opens().stream().map(ModuleDescriptor.Opens::source).collect(Collectors.toSet());
        for (String pkg : module.getPackages()) {
            expect(api.contains(pkg) || opened.contains(pkg) || !module.isExported(pkg, ModulePathCheck.class.getModule()),
                    module.getName() + " exports " + pkg + " to a user's module");
        }
    }

    private static void expect(boolean condition, String message) {
        if (!condition) {
            System.err.println("module path check failed: " + message);
            System.exit(1);
        }
    }
}
