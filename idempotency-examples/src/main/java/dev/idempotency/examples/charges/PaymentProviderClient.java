package dev.idempotency.examples.charges;

import dev.idempotency.DownstreamKey;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * The charge service's client of the payment provider, on {@link HttpClient}. Every request carries
 * an {@code Idempotency-Key} header, so that the provider charges once per key however often the
 * request is repeated. Immutable and thread-safe.
 */
public final class PaymentProviderClient {

    private final URI charges;
    private final Duration timeout;
    private final HttpClient http;

    /**
     * @param provider the provider's base address
     * @param timeout how long a request may take; choose the lease longer than this
     */
    public PaymentProviderClient(URI provider, Duration timeout) {
        this.charges = Objects.requireNonNull(provider, "provider").resolve("/v1/charges");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
    }

    /**
     * Charges a card, once per {@code idempotencyKey} at the provider.
     *
     * @param idempotencyKey the key the provider deduplicates on: a digest that shows neither the tenant
     *     nor the client's own key, sent as it is
     * @param request what to charge
     * @return the provider's charge id
     * @throws CardDeclinedException if the provider declined the card (a final answer)
     * @throws IOException if the provider could not be reached, timed out or failed: the charge may
     *     or may not have been made, and repeating the request with the same key finds out
     * @throws InterruptedException if the thread was interrupted while it waited
     */
    public String charge(DownstreamKey idempotencyKey, ChargeRequest request)
            throws CardDeclinedException, IOException, InterruptedException {
        String form = "customer=" + encode(request.customer()) + "&card=" + encode(request.card()) + "&amount=" + request.cents();
        HttpRequest post = HttpRequest.newBuilder(charges)
                .timeout(timeout)
                .header("Idempotency-Key", idempotencyKey.id())
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form))
                .build();
        HttpResponse<String> response = http.send(post, HttpResponse.BodyHandlers.ofString());
        switch (response.statusCode()) {
            case 200:
                return response.body();
            case 402:
                throw new CardDeclinedException(response.body());
            default:
                throw new IOException("the payment provider answered " + response.statusCode() + ": " + response.body());
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "PaymentProviderClient[" + charges + "]";
    }
}
