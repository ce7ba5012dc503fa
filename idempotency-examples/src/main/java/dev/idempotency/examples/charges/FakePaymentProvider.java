package dev.idempotency.examples.charges;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A payment provider on 127.0.0.1 (an ephemeral port), small enough to read, that behaves as real
 * ones do where it matters: {@code POST /v1/charges} with an {@code Idempotency-Key} header charges
 * once per key. A repeated request with the same key gets the first answer again (the same charge
 * id, or the same decline) and charges nothing; one that arrives while the first is still running
 * waits for it; the same key with other parameters is refused with 400.
 *
 * <p>It can be told to decline a card or an amount, to be slow, and to fail the next request with
 * 500 (before charging, or after charging, when the answer is lost on the way back). It counts the
 * charges it really made. Thread-safe.
 *
 * <p>The protocol, form-encoded in, plain text out: {@code customer}, {@code card} and
 * {@code amount} (cents) in; 200 with the charge id ({@code pay_000001}), or 402 with the decline's
 * reason.
 */
public final class FakePaymentProvider implements AutoCloseable {

    /**
     * A charge the provider really made.
     *
     * @param id the provider's charge id
     * @param idempotencyKey the {@code Idempotency-Key} it was made for
     * @param customer who paid
     * @param card with which card
     * @param cents how much
     */
    public record Charge(String id, String idempotencyKey, String customer, String card, long cents) {
    }

    /** What the next request meets, once. */
    private enum Fault { NONE, FAIL_BEFORE_CHARGING, FAIL_AFTER_CHARGING }

    /** The answer to a key, kept for its repetitions. */
    private record Answer(int status, String body, Map<String, String> parameters) {
    }

    private final HttpServer server;
    private final ExecutorService threads;
    private final Map<String, CompletableFuture<Answer>> answers = new ConcurrentHashMap<>();
    private final List<Charge> charges = new ArrayList<>();
    private final Set<String> declinedCards = ConcurrentHashMap.newKeySet();
    private final Set<Long> declinedAmounts = ConcurrentHashMap.newKeySet();
    private final AtomicReference<Fault> nextFault = new AtomicReference<>(Fault.NONE);
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile long minDelayNanos;
    private volatile long maxDelayNanos;

    private FakePaymentProvider() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        threads = Executors.newCachedThreadPool(task -> {
            Thread t = new Thread(task, "fake-payment-provider");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(threads);
        server.createContext("/v1/charges", this::handle);
        server.start();
    }

    /**
     * Starts a provider on 127.0.0.1, on a port the system chooses.
     *
     * @return the running provider; close it to stop it
     * @throws IOException if no port can be bound
     */
    public static FakePaymentProvider start() throws IOException {
        return new FakePaymentProvider();
    }

    /** @return the provider's base address, such as {@code http://127.0.0.1:40123} */
    public URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** @param card a card token whose charges are declined from now on */
    public void declineCard(String card) {
        declinedCards.add(card);
    }

    /** @param cents an amount whose charges are declined from now on */
    public void declineAmount(long cents) {
        declinedAmounts.add(cents);
    }

    /**
     * Makes every request wait a random time in {@code [min, max]} before it is handled.
     *
     * @param min the shortest wait
     * @param max the longest wait, at least {@code min}
     */
    public void delay(Duration min, Duration max) {
        if (max.compareTo(min) < 0) {
            throw new IllegalArgumentException("max must be at least min");
        }
        minDelayNanos = min.toNanos();
        maxDelayNanos = max.toNanos();
    }

    /**
     * Answers the next request with 500, once.
     *
     * @param afterCharging {@code false}: before doing anything (a repetition then charges);
     *     {@code true}: after charging and keeping the answer, as when the answer is lost on the way
     *     back (a repetition with the same key gets the charge that was made)
     */
    public void failNextRequest(boolean afterCharging) {
        nextFault.set(afterCharging ? Fault.FAIL_AFTER_CHARGING : Fault.FAIL_BEFORE_CHARGING);
    }

    /** @return the charges really made, in order */
    public List<Charge> charges() {
        synchronized (charges) {
            return List.copyOf(charges);
        }
    }

    /** @return how many charges were really made */
    public int chargesMade() {
        synchronized (charges) {
            return charges.size();
        }
    }

    /** @return how many requests reached the provider, repetitions included */
    public int requests() {
        return requests.get();
    }

    /** @return how many requests are being handled now */
    public int inFlight() {
        return inFlight.get();
    }

    /** Stops the server at once; requests under way are dropped. */
    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        requests.incrementAndGet();
        inFlight.incrementAndGet();
        try (exchange) {
            String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            if (!"POST".equals(exchange.getRequestMethod()) || key == null || key.isBlank()) {
                respond(exchange, 400, "POST with an Idempotency-Key header");
                return;
            }
            Map<String, String> parameters = form(exchange.getRequestBody());
            pause();
            Fault fault = nextFault.getAndSet(Fault.NONE);
            if (fault == Fault.FAIL_BEFORE_CHARGING) {
                respond(exchange, 500, "internal error");
                return;
            }
            CompletableFuture<Answer> mine = new CompletableFuture<>();
            CompletableFuture<Answer> first = answers.putIfAbsent(key, mine);
            Answer answer;
            if (first == null) {
                answer = charge(key, parameters);
                mine.complete(answer);
            } else {
                answer = first.join(); // a repetition, or a duplicate that arrived while the first ran
                if (!answer.parameters().equals(parameters)) {
                    respond(exchange, 400, "Idempotency-Key " + key + " was used with other parameters");
                    return;
                }
                exchange.getResponseHeaders().add("Idempotent-Replayed", "true");
            }
            if (fault == Fault.FAIL_AFTER_CHARGING) {
                respond(exchange, 500, "internal error");
                return;
            }
            respond(exchange, answer.status(), answer.body());
        } catch (IOException clientGone) {
            // The client hung up (or was killed): what was charged stays charged, as at a real provider.
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private Answer charge(String key, Map<String, String> parameters) {
        String customer = parameters.getOrDefault("customer", "");
        String card = parameters.getOrDefault("card", "");
        long cents;
        try {
            cents = Long.parseLong(parameters.getOrDefault("amount", ""));
        } catch (NumberFormatException e) {
            return new Answer(400, "amount must be a whole number of cents", parameters);
        }
        if (declinedCards.contains(card) || declinedAmounts.contains(cents)) {
            return new Answer(402, "card_declined: the card " + card + " was declined", parameters);
        }
        synchronized (charges) {
            String id = String.format("pay_%06d", charges.size() + 1);
            charges.add(new Charge(id, key, customer, card, cents));
            return new Answer(200, id, parameters);
        }
    }

    private void pause() {
        long min = minDelayNanos;
        long max = maxDelayNanos;
        if (max <= 0) {
            return;
        }
        try {
            Thread.sleep(Duration.ofNanos(min + ThreadLocalRandom.current().nextLong(max - min + 1)).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Map<String, String> form(InputStream body) throws IOException {
        Map<String, String> parameters = new HashMap<>();
        String text = new String(body.readAllBytes(), StandardCharsets.UTF_8);
        for (String pair : text.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                parameters.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return parameters;
    }

    private static void respond(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
