package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.faults.FaultClient.Step;
import java.nio.file.Path;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 7 (docs/contract.md), "connection lost": the connection between a client and its server
 * is cut at each step of the protocol, through a {@link TcpProxy} of the test's own: before the
 * claim, after it, during the work, after the completion, and during {@code COMMIT}, both before
 * the server has it and after (where the client cannot know whether it committed). The attempt must
 * fail with an exception and no invented outcome; the retry must run the work once, or replay the
 * result if the cut attempt did commit; a second retry must replay. Every build: {@value #KEYS}
 * keys per step and database; deep: {@value #DEEP_KEYS}.
 */
class ConnectionCutTest {

    static final int KEYS = 4;
    static final int DEEP_KEYS = 100;

    /** Where the connection is cut. */
    enum Cut {
        BEFORE_CLAIM(Step.BEFORE_CLAIM, null),
        AFTER_CLAIM(Step.AFTER_CLAIM, null),
        DURING_WORK(Step.DURING_WORK, null),
        AFTER_COMPLETION(Step.AFTER_COMPLETION, null),
        COMMIT_NOT_RECEIVED(Step.COMMIT, TcpProxy.CommitCut.BEFORE_SENDING),
        COMMIT_RECEIVED_ANSWER_LOST(Step.COMMIT, TcpProxy.CommitCut.AFTER_SENDING);

        final Step step;
        final TcpProxy.CommitCut commit;

        Cut(Step step, TcpProxy.CommitCut commit) {
            this.step = step;
            this.commit = commit;
        }
    }

    @Test
    void postgres(@TempDir Path dir) throws Exception {
        cut(FaultDatabase.postgres(), dir);
    }

    @Test
    void mariadb(@TempDir Path dir) throws Exception {
        cut(FaultDatabase.mariadb(), dir);
    }

    private static void cut(FaultDatabase db, Path dir) throws Exception {
        Matcher m = Pattern.compile("(jdbc:[a-z]+://)([^:/]+):(\\d+)(/.*)").matcher(db.url());
        assertThat(m.matches()).as("a server URL with host and port: %s", db.url()).isTrue();
        int keys = FaultRun.DEEP ? DEEP_KEYS : KEYS;
        try (TcpProxy proxy = new TcpProxy(m.group(2), Integer.parseInt(m.group(3)))) {
            // prepareThreshold=0: the PostgreSQL driver sends every statement's text, COMMIT included, instead of
            // naming a statement it prepared before, so that the proxy sees each COMMIT.
            String options = db.url().startsWith("jdbc:postgresql:") ? (m.group(4).contains("?") ? "&" : "?") + "prepareThreshold=0" : "";
            FaultDatabase proxied = db.at(m.group(1) + "127.0.0.1:" + proxy.port() + m.group(4) + options);
            FaultRun run = new FaultRun(proxied, dir);
            AtomicReference<Cut> armed = new AtomicReference<>();
            FaultClient.Faults faults = (step, key, c) -> {
                Cut cut = armed.get();
                if (cut == null || cut.step != step || !armed.compareAndSet(cut, null)) {
                    return;
                }
                if (cut.commit != null) {
                    proxy.cutAtCommit(cut.commit);
                    return;
                }
                if (step == Step.BEFORE_CLAIM) {
                    try (Statement s = c.createStatement()) {
                        s.execute("SELECT 1"); // the transaction has begun on the server
                    }
                }
                proxy.severAll();
            };
            Map<Cut, int[]> firstRetries = new EnumMap<>(Cut.class); // [executed, replayed]
            try (HikariDataSource ds = proxied.pool(2); History cutHistory = run.history("cut"); History retryHistory = run.history("retry")) {
                ds.setConnectionTimeout(10_000);
                Workload.createTables(ds, run.store);
                FaultClient cutClient = run.client("cut", ds, cutHistory, faults);
                FaultClient retryClient = run.client("retry", ds, retryHistory, FaultClient.Faults.NONE);
                for (Cut cut : Cut.values()) {
                    for (int i = 0; i < keys; i++) {
                        String key = cut + "-" + i;
                        armed.set(cut);
                        assertThat(cutClient.attempt(key)).as("the attempt cut at %s on %s was answered", cut, db).isFalse();
                        assertThat(armed.get()).as("the cut at %s fired", cut).isNull();
                        retryClient.untilAnswered(key, Duration.ofSeconds(30));
                    }
                }
                for (HistoryEvent e : History.readAll(dir)) {
                    if (e.type() == HistoryEvent.Type.ACK && e.client().equals("retry")) {
                        firstRetries.computeIfAbsent(Cut.valueOf(e.key().substring(0, e.key().lastIndexOf('-'))), c -> new int[2])
                                [e.executed() ? 0 : 1]++;
                    }
                }
                run.check(ds, FaultRun.INFRASTRUCTURE_FAILURES, String.format("%d connection cuts (%d at each of %s)",
                        keys * Cut.values().length, keys, List.of(Cut.values())));
            }
            // Only a COMMIT the server received can have committed: then the retry replays; everywhere else it runs the work.
            for (Cut cut : Cut.values()) {
                int[] answers = firstRetries.get(cut);
                if (cut == Cut.COMMIT_RECEIVED_ANSWER_LOST) {
                    assertThat(answers[1]).as("retries after %s that replayed", cut).isPositive();
                } else {
                    assertThat(answers[1]).as("retries after %s that replayed (the cut attempt cannot have committed)", cut).isZero();
                    assertThat(answers[0]).as("retries after %s that ran the work", cut).isEqualTo(keys);
                }
            }
        }
    }
}
