package dev.idempotency.examples.http;

import dev.idempotency.http.RetryingHttpClient;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.h2.jdbcx.JdbcDataSource;

/**
 * The problem statement's demonstration over real HTTP: {@link PaymentsApi} on 127.0.0.1 with an H2
 * file database, losing every third answer after the commit, and the {@link RetryingHttpClient}
 * sending the same logical payments to {@code POST /unprotected/payments} and to
 * {@code POST /payments}. It prints, per endpoint, the requests sent, the payments created and the
 * distinct payment ids the client received.
 *
 * <p>Options: {@code --operations N} (20), {@code --fault close|late|none} ({@code close}),
 * {@code --lose-every N} (3), {@code --dir folder} ({@code target/http-demo}, emptied first). With
 * {@code --serve [--port N]} (8080) it only runs the server, for {@code curl}, until stopped; its
 * database is in a folder of its own ({@code target/http-serve} unless {@code --dir} says otherwise),
 * kept between runs.
 *
 * <p>In a browser: the server also serves a page at {@code /} ({@code http://127.0.0.1:8080/}),
 * which sends each payment of its form to both endpoints side by side and shows, per side, the
 * payment ids it was answered and the charges the server made ({@code GET /stats}). Its script makes one key per
 * payment with {@code crypto.randomUUID()} and keeps it, with the payment, in {@code localStorage}
 * until the answer arrives; a reload while a payment is pending (tick "slow": the server takes 2
 * seconds) sends it again, with the same key to {@code /payments}. Run it with:
 *
 * <pre>{@code
 * mvn -q -pl idempotency-examples -am compile exec:java -Dexec.mainClass=dev.idempotency.examples.http.HttpPaymentsDemo -Dexec.args="--serve --fault none"
 * }</pre>
 */
public final class HttpPaymentsDemo {

    /** How long the client waits for one answer; a late answer comes after it. */
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(2);

    private HttpPaymentsDemo() {
    }

    /**
     * What one endpoint received and answered.
     *
     * @param endpoint the path
     * @param operations the logical payments the client made
     * @param requestsSent the requests the client sent, retries included
     * @param paymentsCreated the payments the server committed
     * @param distinctIdsReceived the distinct payment ids in the answers the client received
     */
    public record Row(String endpoint, int operations, int requestsSent, long paymentsCreated, int distinctIdsReceived) {
    }

    /**
     * The options.
     *
     * @param operations logical payments per endpoint
     * @param fault how answers are lost
     * @param loseEvery every n-th answer of an endpoint is lost
     * @param dir the folder of the H2 database
     * @param serve only run the server
     * @param port the server's port with {@code --serve}
     */
    public record Options(int operations, PaymentsApi.Fault fault, int loseEvery, Path dir, boolean serve, int port) {

        /**
         * @param args the command line
         * @return the options
         * @throws IllegalArgumentException naming an unknown or malformed option
         */
        public static Options parse(String... args) {
            int operations = 20;
            PaymentsApi.Fault fault = PaymentsApi.Fault.CLOSE;
            int loseEvery = 3;
            Path dir = null;
            boolean serve = false;
            int port = 8080;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--operations" -> operations = Integer.parseInt(args[++i]);
                    case "--fault" -> fault = PaymentsApi.Fault.valueOf(args[++i].toUpperCase(java.util.Locale.ROOT));
                    case "--lose-every" -> loseEvery = Integer.parseInt(args[++i]);
                    case "--dir" -> dir = Path.of(args[++i]);
                    case "--serve" -> serve = true;
                    case "--port" -> port = Integer.parseInt(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option '" + args[i]
                            + "'; use --operations N, --fault close|late|none, --lose-every N, --dir folder, --serve, --port N");
                }
            }
            if (dir == null) { // the demonstration empties its folder: the server alone keeps its database apart
                dir = Path.of("target", serve ? "http-serve" : "http-demo");
            }
            if (operations < 1 || loseEvery < 2) {
                throw new IllegalArgumentException("--operations must be at least 1 and --lose-every at least 2");
            }
            return new Options(operations, fault, loseEvery, dir.toAbsolutePath(), serve, port);
        }
    }

    /**
     * @param args the options above
     * @throws Exception if the server or the database fails
     */
    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        if (options.serve()) {
            serve(options);
        } else {
            run(options, System.out);
        }
    }

    private static void serve(Options options) throws Exception {
        JdbcDataSource dataSource = database(options.dir());
        PaymentsApi.createTables(dataSource);
        PaymentsApi api = new PaymentsApi(dataSource, options.port(), options.fault(), options.loseEvery(), CLIENT_TIMEOUT.multipliedBy(2));
        System.out.println("Payments API on " + api.uri() + " (H2 file in " + shown(options.dir()) + "), clients shop-a:secret-a and"
                + " shop-b:secret-b; fault mode " + options.fault() + ". Stop it with Ctrl-C. Try:");
        System.out.println("  curl -i -u shop-a:secret-a -H 'Idempotency-Key: order-1' -d 'customer=alice&cents=1250' " + api.uri()
                + "/payments");
        System.out.println("Or open " + api.uri() + "/ in a browser: the same payment, with and without a key, side by side.");
        Thread.currentThread().join();
    }

    /**
     * Runs the demonstration on a fresh database in {@code options.dir()}.
     *
     * @param options the options
     * @param out where to print
     * @return one row per endpoint: unprotected first
     * @throws Exception if the server or the database fails
     */
    public static Row[] run(Options options, PrintStream out) throws Exception {
        deleteDatabase(options.dir());
        JdbcDataSource dataSource = database(options.dir());
        PaymentsApi.createTables(dataSource);
        try (PaymentsApi api = new PaymentsApi(dataSource, 0, options.fault(), options.loseEvery(), CLIENT_TIMEOUT.multipliedBy(3).dividedBy(2))) {
            out.printf("Payments API on %s, H2 file in %s (WRITE_DELAY=0).%nFault mode %s: every %s answer of each endpoint is"
                            + " lost after the payment was committed.%n%d logical payments to each endpoint, sent by the retrying client"
                            + " (the same Idempotency-Key on every retry of one payment).%n%n", api.uri(), shown(options.dir()), options.fault(),
                    ordinal(options.loseEvery()), options.operations());
            warmUp(api); // a cold first request could outlast the client's timeout and be retried, a loss not of the fault mode
            Row unprotected = send(api, "/unprotected/payments", options.operations());
            Row protectedRow = send(api, "/payments", options.operations());
            out.printf("%-28s %10s %13s %17s %28s%n", "endpoint", "operations", "requests sent", "payments created",
                    "distinct payment ids received");
            for (Row row : new Row[] {unprotected, protectedRow}) {
                out.printf("%-28s %10d %13d %17d %28d%n", "POST " + row.endpoint(), row.operations(), row.requestsSent(),
                        row.paymentsCreated(), row.distinctIdsReceived());
            }
            out.printf("%nUnprotected: %d payments for %d operations, %d of them charged twice without the client knowing."
                            + "%nProtected:   %d payments for %d operations: every retry got the first answer back.%n",
                    unprotected.paymentsCreated(), unprotected.operations(), unprotected.paymentsCreated() - unprotected.operations(),
                    protectedRow.paymentsCreated(), protectedRow.operations());
            return new Row[] {unprotected, protectedRow};
        }
    }

    // tag::client[]
    /** Sends {@code operations} logical payments, each retried with its own key until it has an answer. */
    private static Row send(PaymentsApi api, String endpoint, int operations) throws Exception {
        AtomicInteger sent = new AtomicInteger();
        RetryingHttpClient client = RetryingHttpClient.builder(HttpClient.newHttpClient())
                .attemptTimeout(CLIENT_TIMEOUT)
                .listener(new RetryingHttpClient.Listener() {
                    @Override
                    public void onSend(HttpRequest request, int attempt) {
                        sent.incrementAndGet();
                    }
                })
                .build();
        Set<String> ids = new HashSet<>();
        for (int i = 1; i <= operations; i++) {
            HttpRequest payment = HttpRequest.newBuilder(api.uri().resolve(endpoint))
                    .header("Authorization", basic("shop-a", "secret-a"))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("customer=customer-" + i + "&cents=" + (1000 + i)))
                    .build(); // no Idempotency-Key: the client makes one per operation, before the first send
            HttpResponse<String> response = client.send(payment, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 201) {
                throw new IllegalStateException(endpoint + " answered " + response.statusCode() + ": " + response.body());
            }
            ids.add(idOf(response.body()));
        }
        return new Row(endpoint, operations, sent.get(), api.payments(endpoint), ids.size());
    }
    // end::client[]

    private static void warmUp(PaymentsApi api) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        for (String endpoint : new String[] {"/unprotected/payments", "/payments"}) {
            client.send(HttpRequest.newBuilder(api.uri().resolve(endpoint)).header("Authorization", basic("shop-a", "secret-a")).build(),
                    HttpResponse.BodyHandlers.discarding());
        }
    }

    private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

    private static String idOf(String body) {
        Matcher m = ID.matcher(body);
        if (!m.find()) {
            throw new IllegalStateException("no payment id in " + body);
        }
        return m.group(1);
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** A folder under the working directory as a relative path, shorter to read. */
    private static Path shown(Path dir) {
        Path here = Path.of("").toAbsolutePath();
        return dir.startsWith(here) ? here.relativize(dir) : dir;
    }

    private static String ordinal(int n) {
        return n == 2 ? "second" : n == 3 ? "third" : n + "th";
    }

    /** An H2 file whose commits are on disk when they return, with lock waits as long as the key policy's. */
    private static JdbcDataSource database(Path dir) {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:file:" + dir.resolve("payments") + ";WRITE_DELAY=0;LOCK_TIMEOUT=10000");
        return dataSource;
    }

    private static void deleteDatabase(Path dir) throws java.io.IOException {
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : (Iterable<Path>) files.filter(f -> f.getFileName().toString().startsWith("payments."))::iterator) {
                    Files.delete(file);
                }
            }
        }
    }
}
