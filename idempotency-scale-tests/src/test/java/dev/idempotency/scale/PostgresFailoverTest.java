package dev.idempotency.scale;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The library through a PostgreSQL failover ({@code scripts/db-cluster.sh}): clients send keys
 * through a multi-host URL ({@code targetServerType=primary}), the primary is SIGKILLed (the
 * postmaster and every backend, as in a crash of its machine), the standby is promoted, and the
 * clients go on against it. With a synchronous standby no acknowledged key is lost: every retry of
 * an acknowledged key replays the value its client was given. With an asynchronous one the keys
 * acknowledged in the replication lag are lost, and their retries run the work again: measured here
 * on demand ({@code -Didempotency.scale.asyncRounds=15}), and reported in docs/scale-out.md.
 */
class PostgresFailoverTest {

    /** What one failover did to the clients' keys. */
    record Round(String mode, int acknowledged, int lost, int replayed, long failoverMillis, int failedAttempts, String failures) {
        @Override
        public String toString() {
            return String.format("%s standby: %d keys acknowledged, %d lost (run again by their retry), %d replayed;"
                    + " no acknowledgement for %d ms around the failover; %d attempts failed and were sent again (%s)",
                    mode, acknowledged, lost, replayed, failoverMillis, failedAttempts, failures);
        }
    }

    @Test
    void withASynchronousStandbyNoAcknowledgedKeyIsLostAndEveryRetryReplays() throws Exception {
        Round round = failover("sync");
        System.out.println("[postgresql] " + round);
        assertThat(round.lost()).as("acknowledged keys lost by the failover").isZero();
        assertThat(round.replayed()).isEqualTo(round.acknowledged());
    }

    @Test
    void withAnAsynchronousStandbyTheLossIsMeasured() throws Exception {
        int rounds = Integer.getInteger("idempotency.scale.asyncRounds", 0);
        Assumptions.assumeTrue(rounds > 0, "the asynchronous failover is measured on demand: -Didempotency.scale.asyncRounds=15");
        List<Round> results = new ArrayList<>();
        try {
            for (int i = 0; i < rounds; i++) {
                Round round = failover("async");
                System.out.println("[postgresql] round " + (i + 1) + ": " + round);
                results.add(round);
            }
        } catch (Exception | AssertionError e) {
            try {
                Cluster.control("pg-rebuild", "sync");
            } catch (Exception | AssertionError rebuild) {
                e.addSuppressed(rebuild);
            }
            throw e;
        }
        Cluster.control("pg-rebuild", "sync"); // as scripts/test leaves it for the other tests
        long losing = results.stream().filter(r -> r.lost() > 0).count();
        int lost = results.stream().mapToInt(Round::lost).sum();
        int acknowledged = results.stream().mapToInt(Round::acknowledged).sum();
        System.out.printf("[postgresql] asynchronous standby, %d failovers: %d lost acknowledged keys (%d of %d acknowledged),"
                + " in %d of the failovers%n", rounds, lost, lost, acknowledged, losing);
        results.forEach(r -> assertThat(r.lost() + r.replayed()).isEqualTo(r.acknowledged()));
    }

    /** A fresh primary and standby in the mode, unless they already run so. */
    private static void ensurePair(String mode) throws Exception {
        String names;
        boolean standbyInRecovery;
        try (Connection primary = direct("IDEMPOTENCY_PG_PRIMARY_PORT"); Connection standby = direct("IDEMPOTENCY_PG_STANDBY_PORT");
             Statement p = primary.createStatement(); Statement s = standby.createStatement();
             ResultSet n = p.executeQuery("SHOW synchronous_standby_names"); ResultSet r = s.executeQuery("SELECT pg_is_in_recovery()")) {
            n.next();
            r.next();
            names = n.getString(1);
            standbyInRecovery = r.getBoolean(1);
        } catch (SQLException down) {
            names = null;
            standbyInRecovery = false;
        }
        boolean ready = standbyInRecovery && names != null && (mode.equals("sync") ? !names.isEmpty() : names.isEmpty());
        if (!ready) {
            Cluster.control("pg-rebuild", mode);
        }
    }

    private static Connection direct(String portVariable) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + Cluster.env(portVariable) + "/idem?connectTimeout=2",
                Cluster.env("IDEMPOTENCY_PG_FAILOVER_USER"), Cluster.env("IDEMPOTENCY_PG_FAILOVER_PASSWORD"));
    }

    private static Round failover(String mode) throws Exception {
        String url = Cluster.env("IDEMPOTENCY_PG_FAILOVER_URL");
        ensurePair(mode);
        // hostRecheckSeconds: how long the driver trusts what it learnt about a host ("standby"); the
        // default, 10 s, would keep the clients from the promoted standby that long.
        try (HikariDataSource pool = Cluster.pool(url, "IDEMPOTENCY_PG_FAILOVER", 8,
                Map.of("hostRecheckSeconds", "1", "connectTimeout", "2", "socketTimeout", "20"))) {
            JdbcIdempotencyStore.ofDefaults().createTableIfMissing(pool);
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.executeUpdate("CREATE TABLE IF NOT EXISTS work_log (id BIGSERIAL PRIMARY KEY, k VARCHAR(200) NOT NULL, v VARCHAR(200) NOT NULL)");
            }
            ManagedIdempotency<Connection> managed = ManagedIdempotency.of(Idempotency.of(JdbcIdempotencyStore.ofDefaults()),
                    JdbcTransactions.of(pool));
            String prefix = "failover-" + UUID.randomUUID().toString().substring(0, 8);
            KeyedLoad load = new KeyedLoad(prefix, 4, (key, attempt) ->
                    managed.execute(IdempotencyKey.of("pg", key), tx -> work(tx, key))).start();
            Thread.sleep(1_500);
            long killedAt = System.nanoTime();
            Cluster.control("pg-kill-primary");
            Cluster.control("pg-promote");
            Thread.sleep(3_000);
            long stoppedAt = System.nanoTime();
            load.stop();
            long pause = load.longestPauseMillis(killedAt, stoppedAt);

            Map<String, List<String>> executions = executions(pool, prefix);
            executions.forEach((key, values) -> assertThat(values).as("executions of %s on the new primary", key).hasSize(1));
            int lost = 0;
            int replayed = 0;
            for (KeyedLoad.Ack ack : load.acknowledged().values()) {
                Outcome<String> again = managed.execute(IdempotencyKey.of("pg", ack.key()), tx -> work(tx, ack.key()));
                if (again.isReplay()) {
                    assertThat(again.value()).as("the replay of %s", ack.key()).isEqualTo(ack.value());
                    assertThat(executions.get(ack.key())).containsExactly(ack.value());
                    replayed++;
                } else {
                    assertThat(executions.get(ack.key())).as("a lost key left no trace").isNull();
                    lost++;
                }
            }
            return new Round(mode, load.acknowledged().size(), lost, replayed, pause, load.failedAttempts(), load.failureKinds());
        }
    }

    private static String work(Connection tx, String key) throws SQLException {
        String value = "pg:" + UUID.randomUUID();
        try (PreparedStatement s = tx.prepareStatement("INSERT INTO work_log (k, v) VALUES (?, ?)")) {
            s.setString(1, key);
            s.setString(2, value);
            s.executeUpdate();
        }
        return value;
    }

    private static Map<String, List<String>> executions(HikariDataSource pool, String prefix) throws SQLException {
        Map<String, List<String>> rows = new HashMap<>();
        try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement("SELECT k, v FROM work_log WHERE k LIKE ?")) {
            s.setString(1, prefix + "%");
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    rows.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                }
            }
        }
        return rows;
    }
}
