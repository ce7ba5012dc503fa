package dev.idempotency.scale;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestEnvironment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The replicated databases of {@code scripts/db-cluster.sh}, named by the environment it prints
 * ({@code IDEMPOTENCY_GALERA_URLS}, {@code IDEMPOTENCY_PG_FAILOVER_URL}, ...), and the faults it
 * injects ({@code IDEMPOTENCY_CLUSTER_CONTROL}, the script itself). {@code scripts/test} starts the
 * cluster and provides them. Without them a test is skipped with a message saying how to start the
 * cluster; under CI ({@code CI=true}) it fails instead.
 */
final class Cluster {

    private Cluster() {
    }

    /** @return the variable's value; skips (or under CI fails) the test if it is not set */
    static String env(String name) {
        String value = TestEnvironment.get(name);
        if (value == null) {
            String script = name.matches("IDEMPOTENCY_PG_(URL|USER|PASSWORD)") ? "scripts/db-servers.sh" : "scripts/db-cluster.sh";
            String message = name + " is not set: run the suite with scripts/test, which starts the databases, or start them with"
                    + " env_lines=\"$(" + script + " start)\" && eval \"$env_lines\" and run the tests in that shell";
            // Surefire reports a class skipped in @BeforeAll as "Tests run: 0" without the reason: say it here.
            System.err.println("[scale-tests] " + (TestEnvironment.underCi() ? "failed: " : "skipped: ") + message);
            TestEnvironment.unavailable(message);
        }
        return value;
    }

    /** @return the JDBC URLs of the Galera nodes, node 1 first */
    static List<String> galeraUrls() {
        return Arrays.asList(env("IDEMPOTENCY_GALERA_URLS").split(","));
    }

    /**
     * A pool that gives up quickly on a dead server: a test must see the failure and move on, as an
     * application behind a load balancer does.
     *
     * @param url a JDBC URL
     * @param prefix the prefix of the {@code _USER} and {@code _PASSWORD} variables
     * @param size the pool size
     * @param properties driver properties
     * @return the pool
     */
    static HikariDataSource pool(String url, String prefix, int size, Map<String, String> properties) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(env(prefix + "_USER"));
        config.setPassword(env(prefix + "_PASSWORD"));
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(3_000);
        config.setValidationTimeout(1_000);
        config.setInitializationFailTimeout(-1);
        properties.forEach(config::addDataSourceProperty);
        return new HikariDataSource(config);
    }

    /**
     * Runs a command of {@code scripts/db-cluster.sh} (galera-kill 3, pg-promote, ...).
     *
     * @param args the command and its argument
     * @return the script's progress output (its stderr)
     * @throws AssertionError if the script fails, with its output
     */
    static String control(String... args) throws IOException, InterruptedException {
        String script = env("IDEMPOTENCY_CLUSTER_CONTROL");
        String[] command = new String[args.length + 1];
        command[0] = script;
        System.arraycopy(args, 0, command, 1, args.length);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.PIPE).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("db-cluster.sh " + String.join(" ", args) + " did not finish within 180 s");
        }
        String output = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError("db-cluster.sh " + String.join(" ", args) + " failed (" + p.exitValue() + "):\n" + output);
        }
        return output;
    }
}
