package dev.idempotency.http;

import dev.idempotency.RetryPolicy;
import dev.idempotency.http.internal.Problems;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.format.TextStyle;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.jspecify.annotations.Nullable;

/**
 * The client side of the {@code Idempotency-Key} header, over {@code java.net.http.HttpClient}: one
 * key per logical operation, generated before the first send, and every retry of that operation sent
 * with the same key, so that a server that honours keys runs it once.
 *
 * <p>{@link #send} is one logical operation:
 * <ol>
 *   <li>Take the request's own {@code Idempotency-Key} if it has one (a key you keep, say, with an
 *       order, so that a retry after your process restarts still sends it); else generate one (a
 *       random UUID). A safe method (GET, HEAD, OPTIONS, TRACE) gets no key: it changes nothing.</li>
 *   <li>Send it, with the per-attempt timeout if the request sets none.</li>
 *   <li>Retry, with the same key, after a timeout or a lost connection (any {@link IOException} but a
 *       failed TLS handshake), and after 409 (the first attempt still runs), 429 and any 5xx. Never
 *       after another status: 400 (a missing or malformed key) and 422 (the key was used for another
 *       request) are the caller's to fix, and a 2xx, 3xx or other 4xx is the operation's answer. Never
 *       after a response marked {@code Idempotent-Replayed: true} either, whatever its status: it is
 *       the answer recorded for the key (a 5xx the server's handler returned, say), and every retry
 *       with the key would get it again. Nor after a problem ({@code application/problem+json} of at
 *       most 64 KiB) whose top-level {@code type} is one of {@link #PERMANENT_PROBLEM_TYPES}, whatever
 *       its status: {@code scope-invalid}, {@code operation-failed}, {@code response-too-large}. A
 *       problem of another type is judged by its status alone.</li>
 *   <li>Before a retry, pause: the {@code Retry-After} the server sent (seconds, or an HTTP date in
 *       any of its three forms: IMF-fixdate, RFC 850 or asctime) if
 *       there is one, but never less than the backoff of the {@link RetryPolicy}: exponential, with
 *       full jitter. A {@code Retry-After} beyond {@link Builder#maxRetryAfter} ends the retries.</li>
 *   <li>Stop after the policy's attempts: return the last response, or throw the last attempt's
 *       exception, with the earlier ones attached as suppressed.</li>
 * </ol>
 * The response's request ({@link HttpResponse#request()}) carries the key that was sent.
 *
 * <p>The request's body publisher is subscribed once per attempt: those of {@code BodyPublishers}
 * ({@code ofString}, {@code ofByteArray}, {@code ofFile}, ...) send the same bytes each time.
 *
 * <p>Immutable and thread-safe, as the {@code HttpClient} it wraps: share one.
 */
public final class RetryingHttpClient {

    /** The request header carrying the key: {@code Idempotency-Key}. */
    public static final String DEFAULT_KEY_HEADER = HttpIdempotency.DEFAULT_KEY_HEADER;
    /** Five attempts in all; pauses bounded by 100 ms, doubling up to 5 s, with full jitter. */
    public static final RetryPolicy DEFAULT_RETRY = RetryPolicy.builder().maxAttempts(5)
            .backoff(Duration.ofMillis(100), Duration.ofSeconds(5)).build();
    /** The timeout of one attempt whose request sets none: 30 seconds. */
    public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(30);
    /** The longest {@code Retry-After} waited for: 60 seconds. */
    public static final Duration DEFAULT_MAX_RETRY_AFTER = Duration.ofSeconds(60);

    /**
     * The problem types of {@link HttpIdempotency} and its adapters that no retry with the same key
     * can change ({@link HttpIdempotency#PROBLEM_TYPES} followed by the name): {@code scope-invalid},
     * {@code operation-failed} and {@code response-too-large} (500s), and the 4xx ones, which this
     * client does not retry anyway ({@code key-missing}, {@code key-malformed}, {@code key-reused},
     * {@code unauthenticated}, {@code request-too-large}, {@code request-malformed}). The layer's
     * other types are transient and retried: {@code key-in-progress} (409), {@code store-unavailable}
     * (503) and {@code internal-error} (500).
     */
    public static final Set<String> PERMANENT_PROBLEM_TYPES = Stream.of("scope-invalid", "operation-failed", "response-too-large",
            "key-missing", "key-malformed", "key-reused", "unauthenticated", "request-too-large", "request-malformed")
            .map(name -> HttpIdempotency.PROBLEM_TYPES + name).collect(Collectors.toUnmodifiableSet());

    /** The largest problem body read for its type; a larger one is passed on unread, and judged by its status. */
    private static final int MAX_PROBLEM_BYTES = 64 * 1024;

    /** The asctime form of an HTTP date: {@code Sun Nov  6 08:49:37 1994}, in UTC. */
    private static final DateTimeFormatter ASCTIME = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss uuuu", Locale.ENGLISH);

    /** Hears each attempt and each retry, for metrics and logs. Its methods must be thread-safe and quick. */
    public interface Listener {
        /**
         * @param request the request about to be sent, with its key
         * @param attempt 1 for the first send, 2 for the first retry, ...
         */
        default void onSend(HttpRequest request, int attempt) {
        }

        /**
         * @param request the request that will be sent again
         * @param attempt the attempt that failed
         * @param reason why it is retried: the status, or the exception
         * @param pause the pause before the next attempt
         */
        default void onRetry(HttpRequest request, int attempt, String reason, Duration pause) {
        }
    }

    private final HttpClient client;
    private final RetryPolicy retry;
    private final Duration attemptTimeout;
    private final Duration maxRetryAfter;
    private final String keyHeader;
    private final Supplier<String> keys;
    private final InstantSource clock;
    private final Listener listener;

    private RetryingHttpClient(Builder b) {
        this.client = b.client;
        this.retry = b.retry;
        this.attemptTimeout = b.attemptTimeout;
        this.maxRetryAfter = b.maxRetryAfter;
        this.keyHeader = b.keyHeader;
        this.keys = b.keys;
        this.clock = b.clock;
        this.listener = b.listener;
    }

    /**
     * @param client the client that sends each attempt
     * @return a builder with the defaults
     */
    public static Builder builder(HttpClient client) {
        return new Builder(client);
    }

    /**
     * @param client the client that sends each attempt
     * @return a retrying client with the defaults
     */
    public static RetryingHttpClient of(HttpClient client) {
        return builder(client).build();
    }

    /**
     * Sends one logical operation, retried with one key as described above.
     *
     * @param request the request; its {@code Idempotency-Key}, if it has one, is the operation's key
     * @param handler reads each response's body
     * @param <T> the body type
     * @return the last response: the operation's answer, or the last retryable one when the attempts ran out
     * @throws IOException the last attempt's failure, when every attempt failed so (earlier ones suppressed)
     * @throws InterruptedException if the thread was interrupted while sending or pausing
     * @throws IllegalArgumentException if the request carries more than one key
     */
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) throws IOException, InterruptedException {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(handler, "handler");
        HttpRequest keyed = keyed(request);
        IOException failures = null;
        for (int attempt = 1; ; attempt++) {
            listener.onSend(keyed, attempt);
            HttpResponse<T> response;
            ProblemType problem = new ProblemType();
            try {
                response = client.send(keyed, problem.reading(handler));
            } catch (IOException e) {
                if (failures != null) {
                    e.addSuppressed(failures);
                }
                failures = e;
                if (attempt >= retry.maxAttempts() || e instanceof SSLHandshakeException) {
                    throw e;
                }
                pause(keyed, attempt, e.toString(), backoff(attempt));
                continue;
            }
            if (!isRetryable(response.statusCode()) || isReplay(response) || problem.isPermanent() || attempt >= retry.maxAttempts()) {
                return response;
            }
            Duration pause = backoff(attempt);
            Optional<Duration> retryAfter = retryAfter(response);
            if (retryAfter.isPresent()) {
                if (retryAfter.get().compareTo(maxRetryAfter) > 0) {
                    return response;
                }
                pause = retryAfter.get().compareTo(pause) > 0 ? retryAfter.get() : pause;
            }
            pause(keyed, attempt, "status " + response.statusCode(), pause);
        }
    }

    /**
     * @param status a response's status
     * @return whether this client retries it: 409, 429 and 5xx (unless the response is a replay, marked
     *     {@code Idempotent-Replayed: true})
     */
    public static boolean isRetryable(int status) {
        return status == 409 || status == 429 || (status >= 500 && status <= 599);
    }

    /**
     * @param type the {@code type} of an {@code application/problem+json} answer (RFC 9457)
     * @return whether it is one of {@link #PERMANENT_PROBLEM_TYPES}: an answer that no retry with
     *     the same key can change, which this client returns at once whatever its status
     */
    public static boolean isPermanentProblem(String type) {
        return PERMANENT_PROBLEM_TYPES.contains(type);
    }

    /** A replay is the answer recorded for the key: every retry with the key would get it again. */
    private static boolean isReplay(HttpResponse<?> response) {
        return response.headers().firstValue(HttpIdempotency.REPLAYED_HEADER).map(v -> v.strip().equalsIgnoreCase("true")).orElse(false);
    }

    private HttpRequest keyed(HttpRequest request) {
        HttpRequest.Builder copy = HttpRequest.newBuilder(request, (name, value) -> true);
        if (request.timeout().isEmpty()) {
            copy.timeout(attemptTimeout);
        }
        int keys = request.headers().allValues(keyHeader).size();
        if (keys > 1) {
            throw new IllegalArgumentException("the request carries " + keys + " " + keyHeader + " headers; one operation has one key");
        }
        String method = request.method();
        boolean safe = method.equals("GET") || method.equals("HEAD") || method.equals("OPTIONS") || method.equals("TRACE");
        if (keys == 0 && !safe) {
            copy.header(keyHeader, Objects.requireNonNull(this.keys.get(), "the key supplier returned null"));
        }
        return copy.build();
    }

    private Duration backoff(int attempt) {
        return retry.backoff(attempt, () -> ThreadLocalRandom.current().nextDouble());
    }

    private void pause(HttpRequest request, int attempt, String reason, Duration pause) throws InterruptedException {
        listener.onRetry(request, attempt, reason, pause);
        Thread.sleep(pause.toMillis(), (int) (pause.toNanos() % 1_000_000));
    }

    /** A {@code Retry-After} in seconds or as an HTTP date; empty if absent or unreadable. */
    private Optional<Duration> retryAfter(HttpResponse<?> response) {
        Optional<String> header = response.headers().firstValue("Retry-After").map(String::strip);
        if (header.isEmpty() || header.get().isEmpty()) {
            return Optional.empty();
        }
        String value = header.get();
        if (value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.of(value.length() > 9 ? Duration.ofSeconds(999_999_999) : Duration.ofSeconds(Long.parseLong(value)));
        }
        Instant now = clock.instant();
        Instant at = parseDate(value, now);
        if (at == null) {
            return Optional.empty();
        }
        Duration until = Duration.between(now, at);
        return Optional.of(until.isNegative() ? Duration.ZERO : until);
    }

    /**
     * An HTTP date in any of the three forms a recipient must accept (RFC 9110, section 5.6.7):
     * IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT}), RFC 850 ({@code Sunday, 06-Nov-94 08:49:37 GMT})
     * and asctime ({@code Sun Nov  6 08:49:37 1994}); {@code null} if it is none of them.
     */
    private static @Nullable Instant parseDate(String value, Instant now) {
        try {
            return ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException notImf) {
            try {
                return LocalDateTime.parse(value, ASCTIME).toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException notAsctime) {
                return parseRfc850(value, now);
            }
        }
    }

    /**
     * An RFC 850 date, whose two-digit year is the one within 50 years of now (RFC 9110: a year that
     * would be more than 50 years in the future is the most recent past one with those digits).
     */
    private static @Nullable Instant parseRfc850(String value, Instant now) {
        int comma = value.indexOf(", ");
        if (comma < 0) {
            return null;
        }
        DateTimeFormatter format = new DateTimeFormatterBuilder().appendPattern("dd-MMM-")
                .appendValueReduced(ChronoField.YEAR, 2, 2, LocalDate.of(now.atZone(ZoneOffset.UTC).getYear() - 49, 1, 1))
                .appendPattern(" HH:mm:ss 'GMT'").toFormatter(Locale.ENGLISH);
        try {
            LocalDateTime at = LocalDateTime.parse(value.substring(comma + 2), format);
            boolean weekday = at.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH).equals(value.substring(0, comma));
            return weekday ? at.toInstant(ZoneOffset.UTC) : null;
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /**
     * The problem type of one attempt's answer: an {@code application/problem+json} body of at most
     * {@link #MAX_PROBLEM_BYTES} is read whole, its top-level {@code type} taken, and the same bytes
     * handed to the caller's subscriber, whatever kind it is (a string, a stream, a file). Any other
     * body goes to the caller's subscriber untouched. One per attempt; read after the send returned.
     */
    private static final class ProblemType {
        private volatile @Nullable String type;

        boolean isPermanent() {
            String read = type;
            return read != null && isPermanentProblem(read);
        }

        <T> HttpResponse.BodyHandler<T> reading(HttpResponse.BodyHandler<T> handler) {
            return info -> {
                HttpResponse.BodySubscriber<T> own = handler.apply(info);
                boolean problem = info.headers().firstValue("Content-Type")
                        .map(type -> type.split(";", 2)[0].strip().equalsIgnoreCase(Problems.MEDIA_TYPE)).orElse(false);
                boolean small = info.headers().firstValueAsLong("Content-Length").orElse(0) <= MAX_PROBLEM_BYTES;
                if (!problem || !small) {
                    return own;
                }
                HttpResponse.BodySubscriber<byte[]> bytes = HttpResponse.BodySubscribers.ofByteArray();
                CompletionStage<T> body = bytes.getBody().thenCompose(read -> {
                    type = Problems.typeOf(read);
                    return handOver(read, own);
                });
                return new HttpResponse.BodySubscriber<T>() {
                    @Override
                    public CompletionStage<T> getBody() {
                        return body;
                    }

                    @Override
                    public void onSubscribe(Flow.Subscription subscription) {
                        bytes.onSubscribe(subscription);
                    }

                    @Override
                    public void onNext(List<ByteBuffer> item) {
                        bytes.onNext(item);
                    }

                    @Override
                    public void onError(Throwable throwable) {
                        bytes.onError(throwable);
                        own.onError(throwable);
                    }

                    @Override
                    public void onComplete() {
                        bytes.onComplete();
                    }
                };
            };
        }

        /** Feeds the body read to the caller's subscriber, as one buffer, when it asks for it. */
        private static <T> CompletionStage<T> handOver(byte[] read, HttpResponse.BodySubscriber<T> own) {
            own.onSubscribe(new Flow.Subscription() {
                private boolean done;

                @Override
                public synchronized void request(long n) {
                    if (done) {
                        return;
                    }
                    done = true;
                    if (n <= 0) {
                        own.onError(new IllegalArgumentException("non-positive request: " + n));
                        return;
                    }
                    own.onNext(List.of(ByteBuffer.wrap(read)));
                    own.onComplete();
                }

                @Override
                public synchronized void cancel() {
                    done = true;
                }
            });
            return own.getBody();
        }
    }

    @Override
    public String toString() {
        return "RetryingHttpClient[" + retry + ", attemptTimeout=" + attemptTimeout + ", maxRetryAfter=" + maxRetryAfter + "]";
    }

    /** Builds a {@link RetryingHttpClient}. Not thread-safe; what it builds is. */
    public static final class Builder {
        private final HttpClient client;
        private RetryPolicy retry = DEFAULT_RETRY;
        private Duration attemptTimeout = DEFAULT_ATTEMPT_TIMEOUT;
        private Duration maxRetryAfter = DEFAULT_MAX_RETRY_AFTER;
        private String keyHeader = DEFAULT_KEY_HEADER;
        private Supplier<String> keys = () -> UUID.randomUUID().toString();
        private InstantSource clock = InstantSource.system();
        private Listener listener = new Listener() { };

        private Builder(HttpClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * @param retry attempts in all and the backoff between them ({@link #DEFAULT_RETRY} by default)
         * @return this builder
         */
        public Builder retryPolicy(RetryPolicy retry) {
            this.retry = Objects.requireNonNull(retry, "retry");
            return this;
        }

        /**
         * @param timeout the timeout of one attempt whose request sets none (positive, at most one hour)
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder attemptTimeout(Duration timeout) {
            this.attemptTimeout = positive("attemptTimeout", timeout);
            return this;
        }

        /**
         * @param max the longest {@code Retry-After} waited for; a longer one returns the response at
         *     once (positive, at most one hour)
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxRetryAfter(Duration max) {
            this.maxRetryAfter = positive("maxRetryAfter", max);
            return this;
        }

        private static Duration positive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero() || value.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException(name + " must be positive and at most one hour, was " + value);
            }
            return value;
        }

        /**
         * @param name the request header that carries the key ({@value #DEFAULT_KEY_HEADER} by default)
         * @return this builder
         */
        public Builder keyHeader(String name) {
            this.keyHeader = dev.idempotency.http.internal.HeaderMaps.checkName(name);
            return this;
        }

        /**
         * @param keys makes a new key for an operation whose request has none (a random UUID by default)
         * @return this builder
         */
        public Builder keys(Supplier<String> keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /**
         * @param clock reads the time for a {@code Retry-After} given as a date (the system clock by default)
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @param listener hears each attempt and retry
         * @return this builder
         */
        public Builder listener(Listener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** @return the client */
        public RetryingHttpClient build() {
            return new RetryingHttpClient(this);
        }
    }
}
