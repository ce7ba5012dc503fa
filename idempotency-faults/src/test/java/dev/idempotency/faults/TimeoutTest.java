package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.KeyPolicy;
import dev.idempotency.faults.FaultClient.Step;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Contract 3 and 7 (docs/contract.md): timeouts shorter than the work.
 *
 * <ul>
 *   <li>A statement timeout ends the work's own slow statement: the attempt fails with the driver's
 *       exception, nothing is recorded, and the retry runs the work once.</li>
 *   <li>A holder's work outlasts a second attempt's timeouts on the same key: the policy's lock timeout,
 *       the database's lock timeout ({@code lock_timeout}, {@code innodb_lock_wait_timeout}) or statement
 *       timeout ({@code statement_timeout}, {@code max_statement_time}) set shorter than the policy's.
 *       The second attempt gets {@code InProgress} or one of the library's exceptions (or, where the
 *       library sets its own lock timeout over the session's, waits and replays), never a raw vendor
 *       error and never the work; once the holder commits, it replays.</li>
 * </ul>
 */
@Isolated
class TimeoutTest {

    /** How long the holder's work keeps the key: longer than every timeout below. */
    static final Duration HOLD = Duration.ofMillis(2_500);

    record Variant(String name, KeyPolicy policy, List<String> session) {
        @Override
        public String toString() {
            return name;
        }
    }

    @Test
    void postgres(@TempDir Path dir) throws Exception {
        FaultDatabase db = FaultDatabase.postgres();
        statementTimeoutInTheWork(db, dir.resolve("work"), "SET LOCAL statement_timeout = '100ms'", "SELECT pg_sleep(1)");
        contenders(db, dir.resolve("lock"), List.of(
                new Variant("policy lock timeout 200 ms", KeyPolicy.builder().lockTimeout(Duration.ofMillis(200)).build(), List.of()),
                new Variant("lock_timeout 100 ms", KeyPolicy.ofDefaults(), List.of("SET LOCAL lock_timeout = '100ms'")),
                new Variant("statement_timeout 100 ms", KeyPolicy.ofDefaults(), List.of("SET LOCAL statement_timeout = '100ms'"))));
    }

    @Test
    void mariadb(@TempDir Path dir) throws Exception {
        FaultDatabase db = FaultDatabase.mariadb();
        statementTimeoutInTheWork(db, dir.resolve("work"), "SET SESSION max_statement_time = 0.1",
                "SELECT COUNT(*) FROM information_schema.columns a, information_schema.columns b, information_schema.columns c");
        contenders(db, dir.resolve("lock"), List.of(
                new Variant("policy lock timeout 200 ms", KeyPolicy.builder().lockTimeout(Duration.ofMillis(200)).build(), List.of()),
                new Variant("innodb_lock_wait_timeout 1 s", KeyPolicy.ofDefaults(), List.of("SET SESSION innodb_lock_wait_timeout = 1")),
                new Variant("max_statement_time 100 ms", KeyPolicy.ofDefaults(), List.of("SET SESSION max_statement_time = 0.1"))));
    }

    private static void statementTimeoutInTheWork(FaultDatabase db, Path dir, String timeout, String slow) throws Exception {
        java.nio.file.Files.createDirectories(dir);
        FaultRun run = new FaultRun(db, dir);
        FaultClient.Faults faults = (step, key, c) -> {
            if (step == Step.BEFORE_CLAIM) {
                execute(c, timeout);
            } else if (step == Step.DURING_WORK) {
                execute(c, slow);
            }
        };
        try (HikariDataSource timed = db.pool(1); HikariDataSource plain = db.pool(2); History h1 = run.history("timed");
                History h2 = run.history("retry")) {
            Workload.createTables(plain, run.store);
            FaultClient timedClient = run.client("timed", timed, h1, faults);
            FaultClient retry = run.client("retry", plain, h2, FaultClient.Faults.NONE);
            for (int i = 0; i < 3; i++) {
                assertThat(timedClient.attempt("slow-" + i)).as("an attempt whose work outlasts the statement timeout").isFalse();
                retry.untilAnswered("slow-" + i, Duration.ofSeconds(30));
            }
            run.check(plain, FaultRun.INFRASTRUCTURE_FAILURES, "a statement timeout (" + timeout + ") shorter than the work");
        }
    }

    private static void contenders(FaultDatabase db, Path dir, List<Variant> variants) throws Exception {
        java.nio.file.Files.createDirectories(dir);
        FaultRun run = new FaultRun(db, dir);
        try (HikariDataSource plain = db.pool(2); History holderHistory = run.history("holder")) {
            Workload.createTables(plain, run.store);
            FaultClient holder = run.client("holder", plain, holderHistory, (step, key, c) -> {
                if (step == Step.AFTER_CLAIM) {
                    Thread.sleep(HOLD.toMillis());
                }
            });
            for (Variant v : variants) {
                String key = "held-" + v.name().replace(' ', '-');
                Thread holding = new Thread(() -> holder.attempt(key), "holder");
                holding.start();
                Thread.sleep(500); // the holder has claimed the key
                try (HikariDataSource own = db.pool(1); History h = run.history("contender-" + variants.indexOf(v))) {
                    FaultClient contender = run.client("contender", own, v.policy(), h, (step, k, c) -> {
                        if (step == Step.BEFORE_CLAIM) {
                            for (String sql : v.session()) {
                                execute(c, sql);
                            }
                        }
                    });
                    // InProgress, a library exception, or (where the library's own lock timeout overrides the session's and it
                    // waits for the holder) the holder's result replayed: the checker refuses a second execution.
                    contender.attempt(key);
                    holding.join();
                    contender.untilAnswered(key, Duration.ofSeconds(30));
                }
            }
            run.check(plain, FaultRun.LIBRARY_FAILURES, "timeouts shorter than the holder's work " + variants);
        }
    }

    private static void execute(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
