package dev.idempotency.examples;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * The demonstration: a client sends reservations and charges, loses the first responses to
 * timeouts, and retries, as clients do. Run once without protection and once with every call
 * wrapped in {@link Idempotent#execute}, each on its own embedded H2 database, and print what
 * happened side by side.
 */
public final class RetryDemo {

    /** How many times each request reaches the server: the first responses are lost, the client retries. */
    static final int DELIVERIES = 3;

    private RetryDemo() {
    }

    /** One client request: an idempotency key and what it asks for. */
    record Request(String key, String description, Call call) {
    }

    /** The server-side work of a request. */
    interface Call {
        String run(Connection c) throws SQLException;

        default Fingerprint fingerprint(String description) {
            return Fingerprint.of(description);
        }
    }

    /** What one run left in its database. */
    record Totals(int deliveries, long reservations, long unitsReserved, long charges, long centsCharged, long executions) {
    }

    /**
     * @param args ignored
     * @throws SQLException if the embedded database fails
     */
    public static void main(String[] args) throws SQLException {
        run(System.out);
    }

    /**
     * Runs both scenarios and prints the comparison.
     *
     * @param out where to print
     * @return the totals, unprotected first
     * @throws SQLException if the embedded database fails
     */
    public static List<Totals> run(PrintStream out) throws SQLException {
        List<Request> requests = List.of(
                new Request(UUID.randomUUID().toString(), "reserve 2 x sku-1", c -> Shop.reserve(c, "sku-1", 2)),
                new Request(UUID.randomUUID().toString(), "reserve 1 x sku-2", c -> Shop.reserve(c, "sku-2", 1)),
                new Request(UUID.randomUUID().toString(), "reserve 5 x sku-2", c -> Shop.reserve(c, "sku-2", 5)),
                new Request(UUID.randomUUID().toString(), "charge 1250 cents to cust-1", c -> Shop.charge(c, "cust-1", 1250)),
                new Request(UUID.randomUUID().toString(), "charge 990 cents to cust-2", c -> Shop.charge(c, "cust-2", 990)));

        out.println("Each request reaches the server " + DELIVERIES + " times: the client times out twice and retries.");
        out.println();
        out.println("== Unprotected: every delivery runs the work ==");
        Totals unprotected = scenario(out, "unprotected", requests, false);
        out.println();
        out.println("== Protected: every call wrapped in Idempotent.execute(key, connection, work) ==");
        Totals protectedTotals = scenario(out, "protected", requests, true);

        out.println();
        out.println(String.format("%-28s %12s %12s", "", "unprotected", "protected"));
        row(out, "requests sent", requests.size(), requests.size());
        row(out, "deliveries (with retries)", unprotected.deliveries(), protectedTotals.deliveries());
        row(out, "work executed", unprotected.executions(), protectedTotals.executions());
        row(out, "reservations written", unprotected.reservations(), protectedTotals.reservations());
        row(out, "units reserved", unprotected.unitsReserved(), protectedTotals.unitsReserved());
        row(out, "charges written", unprotected.charges(), protectedTotals.charges());
        row(out, "cents charged", unprotected.centsCharged(), protectedTotals.centsCharged());
        out.println();
        out.println(protectedTotals.executions() == requests.size()
                ? "Protected: the work ran once per key, and every retry got the first answer back"
                        + " (\"insufficient inventory\" included)."
                : "UNEXPECTED: the protected run executed the work " + protectedTotals.executions() + " times");
        return List.of(unprotected, protectedTotals);
    }

    private static Totals scenario(PrintStream out, String name, List<Request> requests, boolean protect) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:" + name + "-" + UUID.randomUUID())) {
            Shop.createTables(c);
            JdbcIdempotencyStore.ofDefaults().createTableIfMissing(c);
            c.setAutoCommit(false);
            int deliveries = 0;
            long executions = 0;
            for (Request request : requests) {
                for (int delivery = 1; delivery <= DELIVERIES; delivery++) {
                    deliveries++;
                    int[] ran = {0};
                    String answer;
                    if (protect) {
                        IdempotencyKey key = IdempotencyKey.of("demo-client", request.key());
                        IdempotentCall<String> call = IdempotentCall.of(key, Fingerprint.of(request.description()));
                        Outcome<String> outcome = Idempotent.execute(call, c, () -> {
                            ran[0]++;
                            return request.call().run(c);
                        });
                        answer = outcome.status() + ": " + outcome.valueOr("-");
                    } else {
                        ran[0]++;
                        answer = request.call().run(c);
                    }
                    c.commit();
                    executions += ran[0];
                    out.printf("  %-28s delivery %d -> %s%s%n", request.description(), delivery, answer,
                            delivery < DELIVERIES ? "   (response lost)" : "");
                }
            }
            if (protect) {
                IdempotencyKey reused = IdempotencyKey.of("demo-client", requests.get(3).key());
                IdempotentCall<String> otherBody = IdempotentCall.of(reused, Fingerprint.of("charge 99999 cents to cust-1"));
                Outcome<String> misuse = Idempotent.execute(otherBody, c, () -> Shop.charge(c, "cust-1", 99_999));
                c.commit();
                out.printf("  %-28s same key, other body -> %s (answer 422, nothing charged)%n", "charge 99999 cents", misuse.status());
            }
            return new Totals(deliveries, Shop.single(c, "SELECT COUNT(*) FROM reservation"),
                    Shop.single(c, "SELECT COALESCE(SUM(quantity), 0) FROM reservation"),
                    Shop.single(c, "SELECT COUNT(*) FROM charge"),
                    Shop.single(c, "SELECT COALESCE(SUM(cents), 0) FROM charge"), executions);
        }
    }

    private static void row(PrintStream out, String label, long unprotected, long protectedValue) {
        out.println(String.format("%-28s %12d %12d", label, unprotected, protectedValue));
    }
}
