package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotency;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's capabilities are types: handing a lease-only store (Redis, DynamoDB) to an entry point
 * of transactional mode does not compile, while lease mode's own engine takes it; lease mode over a
 * store that keeps records only in the caller's transaction does not compile, nor do named phases
 * or a recovery worker over a store that lists no named operations. Each source here is compiled
 * against the library's classes, as an application would be.
 */
class StoreCapabilityCompileTest {

    @TempDir
    Path dir;

    @Test
    void aLeaseOnlyStoreHandedToTheTransactionalEngineDoesNotCompile() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("Wrong", """
                import dev.idempotency.Idempotency;
                import dev.idempotency.spi.LeaseOnlyStore;
                import dev.idempotency.spi.NoTransaction;

                class Wrong {
                    Idempotency<NoTransaction> engine(LeaseOnlyStore store) {
                        return Idempotency.of(store);
                    }
                }
                """);
        assertThat(errors).as("the compiler's errors").hasSize(1);
        Diagnostic<? extends JavaFileObject> error = errors.get(0);
        assertThat(error.getLineNumber()).as("the line of Idempotency.of(store)").isEqualTo(7);
        assertThat(error.getMessage(Locale.ROOT)).contains("TransactionalStore").contains("LeaseOnlyStore");
    }

    @Test
    void aLeaseOnlyStoreHandedToTheManagedEngineDoesNotCompileEither() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("AlsoWrong", """
                import dev.idempotency.Idempotency;
                import dev.idempotency.ManagedIdempotency;
                import dev.idempotency.spi.LeaseOnlyStore;
                import dev.idempotency.spi.NoTransaction;

                class AlsoWrong {
                    ManagedIdempotency<NoTransaction> engine(LeaseOnlyStore store) {
                        return ManagedIdempotency.of(Idempotency.builder(store).build(), NoTransaction.runner());
                    }
                }
                """);
        assertThat(errors).as("the compiler's errors").isNotEmpty();
        assertThat(errors.get(0).getLineNumber()).isEqualTo(8);
        assertThat(errors.get(0).getMessage(Locale.ROOT)).contains("TransactionalStore");
    }

    @Test
    void theLeaseModeEngineTakesALeaseOnlyStore() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("Right", """
                import dev.idempotency.IdempotencyKey;
                import dev.idempotency.LeasedIdempotency;
                import dev.idempotency.Outcome;
                import dev.idempotency.spi.LeaseOnlyStore;
                import dev.idempotency.spi.NoTransaction;

                class Right {
                    Outcome<String> charge(LeaseOnlyStore store) {
                        LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(store);
                        return payments.lease(IdempotencyKey.of("payments", "p-1"), attempt -> "charged");
                    }
                }
                """);
        assertThat(errors).as("the compiler's errors").isEmpty();
    }

    @Test
    void leaseModeOverATransactionalOnlyStoreDoesNotCompile() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("NoLeases", """
                import dev.idempotency.Idempotency;
                import dev.idempotency.LeasedIdempotency;
                import dev.idempotency.ManagedIdempotency;
                import dev.idempotency.spi.TransactionRunner;
                import dev.idempotency.spi.TransactionalStore;

                class NoLeases<C> {
                    LeasedIdempotency<C> engine(TransactionalStore<C> store, TransactionRunner<C> transactions) {
                        ManagedIdempotency<C> managed = ManagedIdempotency.of(Idempotency.of(store), transactions);
                        return LeasedIdempotency.of(managed, store);
                    }
                }
                """);
        assertOneErrorAt(errors, 10, "LeasingStore", "TransactionalStore");
    }

    @Test
    void theManagedEngineHasNoLeaseModeOfItsOwn() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("NoLeaseMethod", """
                import dev.idempotency.IdempotencyKey;
                import dev.idempotency.ManagedIdempotency;
                import dev.idempotency.Outcome;

                class NoLeaseMethod<C> {
                    Outcome<String> charge(ManagedIdempotency<C> managed) {
                        return managed.lease(IdempotencyKey.of("payments", "p-1"), attempt -> "charged");
                    }
                }
                """);
        assertOneErrorAt(errors, 7, "lease");
    }

    @Test
    void aRecoveryWorkerOverAStoreThatListsNoOperationsDoesNotCompile() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("NoList", """
                import dev.idempotency.LeasedIdempotency;
                import dev.idempotency.RecoveryWorker;
                import dev.idempotency.spi.LeaseOnlyStore;
                import dev.idempotency.spi.NoTransaction;

                class NoList {
                    RecoveryWorker.Builder<NoTransaction> worker(LeaseOnlyStore store) {
                        return RecoveryWorker.builder(LeasedIdempotency.of(store));
                    }
                }
                """);
        assertOneErrorAt(errors, 8, "RecoveringLeasedIdempotency");
    }

    @Test
    void namedPhasesOnAnEngineOverAStoreThatListsNoOperationsDoNotCompile() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("NamedWithoutList", """
                import dev.idempotency.IdempotencyKey;
                import dev.idempotency.LeasedIdempotency;
                import dev.idempotency.Outcome;
                import dev.idempotency.Phases;
                import dev.idempotency.spi.LeasingStore;
                import dev.idempotency.spi.TransactionRunner;

                class NamedWithoutList<C> {
                    Outcome<String> charge(LeasingStore<C> store, TransactionRunner<C> transactions, Phases<C, String, RuntimeException> phases) {
                        LeasedIdempotency<C> payments = LeasedIdempotency.of(store, transactions);
                        return payments.run(IdempotencyKey.of("payments", "p-1"), phases.named("charge"));
                    }
                }
                """);
        assertOneErrorAt(errors, 11, "NamedPhases");
    }

    @Test
    void leaseModeAndItsWorkerTakeAStoreWithTransactionsThatKeepsLeasesAndListsOperations() {
        List<Diagnostic<? extends JavaFileObject>> errors = compile("Both", """
                import dev.idempotency.Idempotency;
                import dev.idempotency.IdempotencyKey;
                import dev.idempotency.LeasedIdempotency;
                import dev.idempotency.ManagedIdempotency;
                import dev.idempotency.NamedPhases;
                import dev.idempotency.RecoveringLeasedIdempotency;
                import dev.idempotency.RecoveryWorker;
                import dev.idempotency.spi.TransactionRunner;
                import dev.idempotency.spi.TransactionalRecoveringStore;

                class Both<C> {
                    RecoveryWorker<C> worker(TransactionalRecoveringStore<C> store, TransactionRunner<C> transactions,
                                             NamedPhases<C, String, RuntimeException> charge) {
                        ManagedIdempotency<C> managed = ManagedIdempotency.of(Idempotency.of(store), transactions);
                        RecoveringLeasedIdempotency<C> leased = LeasedIdempotency.of(managed, store);
                        leased.run(IdempotencyKey.of("payments", "p-1"), charge);
                        return RecoveryWorker.builder(leased).register(charge).build();
                    }
                }
                """);
        assertThat(errors).as("the compiler's errors").isEmpty();
    }

    /** Asserts that the compiler gave one error, on {@code line}, whose message names each of {@code named}. */
    private static void assertOneErrorAt(List<Diagnostic<? extends JavaFileObject>> errors, int line, String... named) {
        assertThat(errors).as("the compiler's errors").hasSize(1);
        assertThat(errors.get(0).getLineNumber()).as("the line of the error").isEqualTo(line);
        assertThat(errors.get(0).getMessage(Locale.ROOT)).contains(named);
    }

    /** Compiles one source file against the library's classes; returns the errors. */
    private List<Diagnostic<? extends JavaFileObject>> compile(String className, String source) {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("the JDK's compiler").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            Path file = dir.resolve(className + ".java");
            Files.writeString(file, source);
            Path out = Files.createDirectories(dir.resolve("classes-" + className));
            List<String> options = List.of("-classpath", classPath(), "-d", out.toString(), "-proc:none");
            boolean compiled = compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(file.toFile())).call();
            List<Diagnostic<? extends JavaFileObject>> errors = new ArrayList<>();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR) {
                    errors.add(d);
                }
            }
            assertThat(compiled).as("compiled, with errors " + errors).isEqualTo(errors.isEmpty());
            return errors;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Where the library's classes are: the core's, and the nullness annotations its signatures carry if they are here. */
    private static String classPath() {
        List<Class<?>> anchors = new ArrayList<>(List.of(Idempotency.class));
        try {
            anchors.add(Class.forName("org.jspecify.annotations.Nullable"));
        } catch (ClassNotFoundException optional) {
            // an optional dependency: the core's classes compile against without it
        }
        return anchors.stream().map(StoreCapabilityCompileTest::locationOf).collect(Collectors.joining(File.pathSeparator));
    }

    private static String locationOf(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
