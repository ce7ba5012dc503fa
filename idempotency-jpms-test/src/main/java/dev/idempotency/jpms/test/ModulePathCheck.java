package dev.idempotency.jpms.test;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.dynamodb.DynamoDbLeasingStore;
import dev.idempotency.jdbi.JdbiIdempotency;
import dev.idempotency.kafka.IdempotentConsumer;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import dev.idempotency.redis.RedisLeasingStore;
import dev.idempotency.spring.SpringIdempotency;
import dev.idempotency.spring.boot.autoconfigure.IdempotencyProperties;
import dev.idempotency.spring.kafka.SpringKafkaIdempotency;
import dev.idempotency.spring.webmvc.EnableIdempotentEndpoints;
import dev.idempotency.testkit.InMemoryIdempotencyStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.invoke.MethodHandles;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReader;
import java.lang.module.ResolvedModule;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Runs from the module path: checks that every published module of the library ({@code
 * dev.idempotency}, {@code dev.idempotency.jdbc}, {@code .jdbi}, {@code .http}, {@code .jakarta},
 * {@code .quarkus}, {@code .testkit}, {@code .micrometer}, {@code .redis}, {@code .dynamodb}, {@code .kafka}, {@code .spring}, {@code
 * .spring.kafka}, {@code .spring.webmvc}, {@code .spring.webflux} and {@code .spring.boot.autoconfigure}) is resolved as an
 * explicit module, that a class of each loads from it, that each exports its API and SPI packages
 * and no other (a public class of an unexported package is out of this module's reach), and that
 * only the packages a framework reflects on are opened. Then executes and replays one key on H2 in
 * memory, once more through the Jdbi adapter, and one in the testkit's in-memory store. Exits with
 * status 1 on any difference, so the build fails.
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
    public static void main(String[] args) throws SQLException, IOException {
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
        expectExports(jakarta, Set.of("dev.idempotency.jakarta.transaction", "dev.idempotency.jakarta.servlet", "dev.idempotency.jakarta.rest"));
        expect(ModuleLayer.boot().findModule("jakarta.servlet").isEmpty(), "jakarta.servlet is on the module path");
        // The same for the Quarkus module: Quarkus, CDI and MicroProfile Config are the application's, absent here.
        Module quarkus = ModuleLayer.boot().findModule("dev.idempotency.quarkus").orElse(null);
        expect(quarkus != null, "dev.idempotency.quarkus is not on the module path");
        expectExports(quarkus, Set.of("dev.idempotency.quarkus"));
        for (String absent : List.of("arc", "quarkus.core", "jakarta.cdi", "microprofile.config.api")) {
            expect(ModuleLayer.boot().findModule(absent).isEmpty(), absent + " is on the module path");
        }
        // The other published modules, each an explicit module that exports its one package.
        expectOnlyPackage(InMemoryIdempotencyStore.class, "dev.idempotency.testkit");
        expectOnlyPackage(MicrometerIdempotencyListener.class, "dev.idempotency.micrometer");
        expectOnlyPackage(RedisLeasingStore.class, "dev.idempotency.redis");
        expectOnlyPackage(DynamoDbLeasingStore.class, "dev.idempotency.dynamodb");
        expectOnlyPackage(IdempotentConsumer.class, "dev.idempotency.kafka");
        expectOnlyPackage(R2dbcIdempotency.class, "dev.idempotency.r2dbc");
        // Its engine takes the core's steps through the core's export to it alone, and the JDBC module's dialects.
        R2dbcIdempotency reactive = R2dbcIdempotency.builder(new dev.idempotency.jdbc.dialect.H2Dialect()).build();
        expect(reactive.toString().contains("H2"), "the R2DBC engine: " + reactive);
        expectOnlyPackage(SpringIdempotency.class, "dev.idempotency.spring");
        expectOnlyPackage(SpringKafkaIdempotency.class, "dev.idempotency.spring.kafka");
        // Its filter is a servlet Filter, and the Servlet API is the container's, absent here: the
        // annotation loads without it.
        expectOnlyPackage(EnableIdempotentEndpoints.class, "dev.idempotency.spring.webmvc");
        expectOnlyPackage(dev.idempotency.spring.webflux.IdempotentWebFluxEndpoint.class, "dev.idempotency.spring.webflux");
        expectOnlyPackage(IdempotencyProperties.class, "dev.idempotency.spring.boot.autoconfigure");
        // Opened where a framework reflects, and only there: JUnit (the contract's package-private
        // lifecycle methods), Spring (configuration classes, properties, failure analyzers).
        Module junit = ModuleLayer.boot().findModule("org.junit.platform.commons").orElseThrow();
        expectOpen(InMemoryIdempotencyStore.class.getModule(), junit, true);
        expectOpen(InMemoryIdempotencyStore.class.getModule(), ModulePathCheck.class.getModule(), false);
        expectOpen(EnableIdempotentEndpoints.class.getModule(), ModulePathCheck.class.getModule(), true);
        expectOpen(IdempotencyProperties.class.getModule(), ModulePathCheck.class.getModule(), true);
        expectOpen(SpringIdempotency.class.getModule(), ModulePathCheck.class.getModule(), false);
        // Spring Boot finds the auto-configurations by the class path, in a file that is in no
        // package and so is readable from a named module; each class it names is in the module.
        List<String> autoConfigurations = autoConfigurations();
        expect(!autoConfigurations.isEmpty(), "no auto-configuration listed in " + AUTO_CONFIGURATION_IMPORTS);
        for (String name : autoConfigurations) {
            Class<?> type = loadFrom(IdempotencyProperties.class.getModule(), name);
            expectModule(type, "dev.idempotency.spring.boot.autoconfigure");
        }
        // A package of ours outside a module's API is out of a user's reach, even for its public classes.
        for (Module module : ourModules()) {
            expectEncapsulated(module);
        }
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
        // The testkit's in-memory store, from its module, under the core's engine.
        InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
        Idempotency<InMemoryIdempotencyStore.Transaction> inMemory = Idempotency.of(memory);
        InMemoryIdempotencyStore.Transaction tx = memory.begin();
        Outcome<String> once = inMemory.execute(key, tx, () -> "kept");
        memory.commit(tx);
        tx = memory.begin();
        Outcome<String> again = inMemory.execute(key, tx, () -> "kept twice");
        memory.commit(tx);
        expect(once.status() == Outcome.Status.EXECUTED && again.status() == Outcome.Status.REPLAYED
                && "kept".equals(again.value()), "in memory: " + once + ", then " + again);
        System.out.println("module path: " + ourModules().stream().map(Module::getName).sorted().collect(Collectors.joining(", "))
                + " resolved as explicit modules, internals not exported; execute and replay on H2, through Jdbi and in memory, passed");
    }

    private static final String AUTO_CONFIGURATION_IMPORTS =
            "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";

    /** The published modules: every module of the boot layer named {@code dev.idempotency} or below it, but this one. */
    private static List<Module> ourModules() {
        List<Module> modules = ModuleLayer.boot().modules().stream()
                .filter(m -> m.getName().equals("dev.idempotency") || m.getName().startsWith("dev.idempotency."))
                .filter(m -> m != ModulePathCheck.class.getModule())
                .collect(Collectors.toList());
        expect(modules.size() == PUBLISHED_MODULES, "resolved " + modules.size() + " of the " + PUBLISHED_MODULES
                + " published modules: " + modules);
        return modules;
    }

    /** The jars of idempotency-bom, each a module. */
    private static final int PUBLISHED_MODULES = 17;

    /**
     * The auto-configurations of ours that Spring Boot finds: it reads every copy of the imports
     * file by the class loader (Boot's own jar has one too), and ours must be among them.
     */
    private static List<String> autoConfigurations() throws IOException {
        List<String> ours = new ArrayList<>();
        Enumeration<URL> copies = IdempotencyProperties.class.getClassLoader().getResources(AUTO_CONFIGURATION_IMPORTS);
        while (copies.hasMoreElements()) {
            try (InputStream in = copies.nextElement().openStream();
                    BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                lines.lines().map(String::strip).filter(l -> l.startsWith("dev.idempotency.")).forEach(ours::add);
            }
        }
        // The file is in no package, so a named module does not encapsulate it.
        try (InputStream in = IdempotencyProperties.class.getModule().getResourceAsStream(AUTO_CONFIGURATION_IMPORTS)) {
            expect(in != null, AUTO_CONFIGURATION_IMPORTS + " is not readable from dev.idempotency.spring.boot.autoconfigure");
        }
        return ours;
    }

    private static Class<?> loadFrom(Module module, String name) {
        Class<?> type = Class.forName(module, name);
        expect(type != null, name + " is not in module " + module.getName());
        return type;
    }

    /** Exports (to everyone) exactly the package of {@code type}, its module's one package. */
    private static void expectOnlyPackage(Class<?> type, String module) {
        expectModule(type, module);
        expectExports(type.getModule(), Set.of(type.getPackageName()));
    }

    private static void expectOpen(Module module, Module to, boolean open) {
        String pkg = module.getPackages().iterator().next();
        expect(module.getPackages().size() == 1, module.getName() + " has more than one package: " + module.getPackages());
        expect(module.isOpen(pkg, to) == open, module.getName() + (open ? " does not open " : " opens ") + pkg + " to " + to);
    }

    /**
     * Each package of the module that is not exported to this module holds a public class that this
     * module cannot reach: the access check of a full-privilege lookup fails.
     */
    private static void expectEncapsulated(Module module) throws IOException {
        ResolvedModule resolved = ModuleLayer.boot().configuration().findModule(module.getName()).orElseThrow();
        Module self = ModulePathCheck.class.getModule();
        List<String> classes;
        try (ModuleReader reader = resolved.reference().open(); Stream<String> entries = reader.list()) {
            classes = entries.filter(e -> e.endsWith(".class") && !e.endsWith("module-info.class") && !e.contains("$"))
                    .map(e -> e.substring(0, e.length() - ".class".length()).replace('/', '.')).collect(Collectors.toList());
        }
        for (String pkg : module.getPackages()) {
            if (module.isExported(pkg, self)) {
                continue;
            }
            int checked = 0;
            for (String name : classes) {
                if (!name.startsWith(pkg + ".") || name.lastIndexOf('.') != pkg.length()) {
                    continue;
                }
                Class<?> type;
                try {
                    type = loadFrom(module, name);
                } catch (LinkageError absent) {
                    continue; // it extends a type of a module not on this path (the Servlet API)
                }
                if (!Modifier.isPublic(type.getModifiers())) {
                    continue;
                }
                try {
                    MethodHandles.lookup().accessClass(type);
                    expect(false, name + " of " + module.getName() + " is accessible to a user's module");
                } catch (IllegalAccessException expected) {
                    checked++; // the package is not exported to this module
                }
            }
            expect(checked > 0, "no public class of " + pkg + " in " + module.getName() + " to check");
        }
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
