package dev.idempotency.examples.charges;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/**
 * The demonstration of lease mode: {@link ChargeService} against a {@link FakePaymentProvider} on
 * 127.0.0.1 and an embedded H2 database. A first charge, its retry, a provider answer lost after the
 * card was charged, a concurrent duplicate, a declined card and a key reused for another amount;
 * each printed as the HTTP answer it would become, with what the provider really charged.
 */
public final class ChargeDemo {

    /** The lease of the demonstration: longer than the provider client's timeout. */
    static final Duration LEASE = Duration.ofSeconds(10);

    private ChargeDemo() {
    }

    /**
     * What the demonstration left behind.
     *
     * @param answers the answer to each request, in order
     * @param providerCharges the charges the provider really made
     * @param providerRequests the requests that reached the provider, repetitions included
     * @param chargesPerProviderKey the most charges the provider made for one {@code Idempotency-Key}
     * @param rowsByStatus the charge table's rows by status
     */
    public record Summary(List<String> answers, int providerCharges, int providerRequests, long chargesPerProviderKey,
                          Map<String, Long> rowsByStatus) {
    }

    /**
     * @param args ignored
     * @throws Exception if the database or the provider fails unexpectedly
     */
    public static void main(String[] args) throws Exception {
        run(System.out);
    }

    /**
     * Runs the demonstration on a fresh in-memory database and provider.
     *
     * @param out where to print
     * @return what it left behind
     * @throws Exception if the database or the provider fails unexpectedly
     */
    public static Summary run(PrintStream out) throws Exception {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:charges-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        try (FakePaymentProvider provider = FakePaymentProvider.start()) {
            ChargeService service = new ChargeService(dataSource, new PaymentProviderClient(provider.uri(), Duration.ofSeconds(5)), LEASE);
            service.createTables();
            Client client = new Client(service, out);
            out.println("Payment provider on " + provider.uri() + "; each line is one POST /charges and its answer.");

            out.println();
            out.println("== A charge, and the client's retry after its answer was lost ==");
            IdempotencyKey first = key();
            ChargeRequest coffee = new ChargeRequest("cust-1", "tok_visa", 1250);
            client.post("first", first, coffee);
            client.post("retry", first, coffee);
            out.printf("  provider: %d charge(s) made, %d request(s) received: the retry never reached it%n",
                    provider.chargesMade(), provider.requests());

            out.println();
            out.println("== The provider charges the card, but its answer is lost (500) ==");
            IdempotencyKey lost = key();
            ChargeRequest book = new ChargeRequest("cust-2", "tok_visa", 3990);
            provider.failNextRequest(true);
            client.post("first", lost, book);
            client.post("retry", lost, book);
            out.printf("  the retry was attempt %d: it resumed the pending charge and sent the same Idempotency-Key;"
                    + " provider: %d charge(s) made for this key%n", attempts(dataSource, lost), provider.charges().stream()
                    .filter(c -> c.customer().equals("cust-2")).count());

            out.println();
            out.println("== A duplicate arrives while the first attempt is still at the provider ==");
            IdempotencyKey slow = key();
            ChargeRequest lamp = new ChargeRequest("cust-3", "tok_visa", 8900);
            provider.delay(Duration.ofMillis(1500), Duration.ofMillis(1500));
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> client.post("first", slow, lamp));
            awaitInFlight(provider);
            client.post("duplicate", slow, lamp);
            holder.get(30, TimeUnit.SECONDS);
            provider.delay(Duration.ZERO, Duration.ZERO);
            client.post("retry", slow, lamp);

            out.println();
            out.println("== A declined card: recorded as a final failure, the charge marked declined ==");
            provider.declineCard("tok_declined");
            IdempotencyKey declined = key();
            ChargeRequest refused = new ChargeRequest("cust-4", "tok_declined", 500);
            client.post("first", declined, refused);
            int requestsBefore = provider.requests();
            client.post("retry", declined, refused);
            out.printf("  the retry replayed the decline; requests to the provider: %d more%n", provider.requests() - requestsBefore);

            out.println();
            out.println("== The first key again, with another amount ==");
            client.post("reuse", first, new ChargeRequest("cust-1", "tok_visa", 99_999));

            Summary summary = new Summary(List.copyOf(client.answers), provider.chargesMade(), provider.requests(),
                    provider.charges().stream().collect(Collectors.groupingBy(FakePaymentProvider.Charge::idempotencyKey,
                            Collectors.counting())).values().stream().mapToLong(Long::longValue).max().orElse(0),
                    rowsByStatus(dataSource));
            out.println();
            out.printf("Requests answered: %d; the provider made %d charges (at most %d per Idempotency-Key);"
                    + " charge rows: %s%n", summary.answers().size(), summary.providerCharges(), summary.chargesPerProviderKey(),
                    summary.rowsByStatus());
            return summary;
        }
    }

    /** A client that prints each answer as HTTP would carry it. */
    private static final class Client {
        private final ChargeService service;
        private final PrintStream out;
        private final List<String> answers = new ArrayList<>();

        Client(ChargeService service, PrintStream out) {
            this.service = service;
            this.out = out;
        }

        void post(String label, IdempotencyKey key, ChargeRequest request) {
            String answer;
            try {
                answer = answer(service.charge(key, request));
            } catch (Exception e) {
                answer = "503 Service Unavailable (" + e.getMessage() + "): retry with the same key";
            }
            synchronized (answers) {
                answers.add(label + " -> " + answer);
                out.printf("  %-9s %s %d cents, key %s -> %s%n", label, request.customer(), request.cents(),
                        key.id().substring(0, 8), answer);
            }
        }

        private static String answer(Outcome<String> outcome) {
            switch (outcome.status()) {
                case EXECUTED:
                    return "201 Created: " + outcome.value();
                case REPLAYED:
                    return "201 Created: " + outcome.value() + " (Idempotent-Replayed: true)";
                case IN_PROGRESS:
                    long seconds = ChargeService.retryAfterSeconds((Outcome.InProgress<String>) outcome);
                    return "409 Conflict, Retry-After: " + seconds + " (the first attempt's lease ends at "
                            + ((Outcome.InProgress<String>) outcome).leaseUntil() + ")";
                case FAILED:
                    Outcome.Failed<String> failed = (Outcome.Failed<String>) outcome;
                    return "402 Payment Required: " + failed.errorMessage() + (failed.isReplay() ? " (Idempotent-Replayed: true)" : "");
                default:
                    return "422 Unprocessable Content: this key was used for another charge";
            }
        }
    }

    private static IdempotencyKey key() {
        return IdempotencyKey.of("shop-1", UUID.randomUUID().toString());
    }

    private static void awaitInFlight(FakePaymentProvider provider) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (provider.inFlight() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    private static int attempts(DataSource dataSource, IdempotencyKey key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT attempts FROM idempotency_record WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    private static Map<String, Long> rowsByStatus(DataSource dataSource) throws SQLException {
        List<String> statuses = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT status FROM " + ChargeService.TABLE);
             ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                statuses.add(rs.getString(1));
            }
        }
        return statuses.stream().collect(Collectors.groupingBy(Function.identity(), TreeMap::new, Collectors.counting()));
    }
}
