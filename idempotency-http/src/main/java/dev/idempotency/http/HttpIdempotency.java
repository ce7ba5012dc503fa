package dev.idempotency.http;

import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.InvalidKeyException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeaseLostException;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.PendingCall;
import dev.idempotency.ResultCodec;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.http.internal.Problems;
import dev.idempotency.http.internal.ResponseCodec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import dev.idempotency.ReleaseKeyException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Locale;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code Idempotency-Key} header on the server, for any HTTP framework: given a {@link Request}
 * and the scope of the authenticated client, it runs the handler at most once per key and answers as
 * the IETF Idempotency-Key draft and Stripe do.
 *
 * <table>
 *   <caption>Answers</caption>
 *   <tr><th>request</th><th>answer</th><th>recorded</th></tr>
 *   <tr><td>safe method (GET, HEAD, OPTIONS, TRACE)</td><td>the handler's own; the key header is ignored</td><td>no</td></tr>
 *   <tr><td>no key where the endpoint requires one; a malformed key</td><td>400, problem</td><td>no</td></tr>
 *   <tr><td>a key, but a scope that the key policy refuses (the server's fault)</td><td>500, problem; nothing runs</td><td>no</td></tr>
 *   <tr><td>same key and request, first attempt still running</td><td>after a bounded wait, the replay; else 409 with
 *       {@code Retry-After}, problem</td><td>no</td></tr>
 *   <tr><td>same key, different request (fingerprint)</td><td>422, problem</td><td>no</td></tr>
 *   <tr><td>same key and request, completed</td><td>the first response: status, body, the headers chosen for replay,
 *       plus {@code Idempotent-Replayed: true}</td><td>(already)</td></tr>
 *   <tr><td>the handler returns a response, any status (a 5xx too, by default: throw for a failure that a
 *       retry may mend)</td><td>that response</td><td>yes</td></tr>
 *   <tr><td>the handler returns a 5xx response and the layer releases server errors
 *       ({@link Builder#serverErrors}, {@link ServerErrors#RELEASE})</td><td>that response; the next retry runs
 *       the handler again</td><td>no: rolled back or released</td></tr>
 *   <tr><td>the handler's response over the key policy's result size limit, encoded</td><td>500,
 *       {@code response-too-large} problem naming the size and the limit, replayed: the handler does not run
 *       again ({@link #handle}: its writes rolled back, the problem recorded in a short transaction of its own;
 *       {@link #handleLeased}: the operation recorded as failed; {@link #handleIn} throws, see there)</td><td>yes</td></tr>
 *   <tr><td>the handler throws</td><td>the exception reaches the caller (the server answers 500); rolled back</td><td>no</td></tr>
 *   <tr><td>lease mode, the store unreachable ({@link StoreUnavailableException}) and the default
 *       {@link dev.idempotency.StoreUnavailablePolicy#REFUSE}</td><td>503 with {@code Retry-After}, problem; the handler
 *       does not run</td><td>no</td></tr>
 * </table>
 * Problems are {@code application/problem+json} (RFC 9457) naming the key in an
 * {@code idempotencyKey} member. The key is {@code (scope, id)}: the id is the header's value, the
 * scope is the server's choice (the authenticated client), so that one client's key never replays
 * another client's response; it is checked only when there is a key to keep (a safe method or an
 * unkeyed request runs whatever it is). The fingerprint is the method, target and body unless the server
 * supplies its own ({@link Builder#fingerprint}). A final failure (see the key policy) is recorded
 * and answered 500 unless mapped otherwise ({@link Builder#failureResponse}).
 *
 * <p><b>Modes.</b> The handler runs in one of three ways, each with the table above:
 * <ol>
 *   <li>{@link #handle}: in a transaction the library begins and commits through the
 *       {@link ManagedIdempotency}'s {@code TransactionRunner}, retried whole on a conflict. The
 *       handler's writes and the recorded response commit together. A duplicate that arrives while
 *       the first attempt's transaction is open waits for it up to the key policy's lock timeout, then
 *       gets the replay, or 409 with {@code Retry-After} of {@link Builder#retryAfter} (the holder is
 *       an open transaction, whose end no one knows).</li>
 *   <li>{@link #handleIn}: in the server's own open transaction, which the server commits or rolls
 *       back (see {@link HttpAnswer#rollbackRequired()}).</li>
 *   <li>{@link #handleLeased}: lease mode, for a handler with effects outside the database (a payment
 *       provider): the key is claimed under a lease in a short transaction of its own, the handler
 *       runs outside any transaction with a downstream key for the provider, and its response is
 *       recorded only if the attempt still holds the key. A duplicate gets 409 with a
 *       {@code Retry-After} that counts to the end of the holder's lease (or waits for it, as the
 *       {@code LeasePolicy} says); an attempt that lost its lease answers 409 as well, and the retry
 *       gets the winner's response.</li>
 * </ol>
 * Which modes a layer has follows from what it is built over:
 * {@link #builder(ManagedIdempotency, LeasedIdempotency)} all three, for a store with transactions
 * that keeps leases (the JDBC store, its lease-mode engine from
 * {@link LeasedIdempotency#of(ManagedIdempotency, dev.idempotency.spi.LeasingStore)}),
 * {@link #builder(ManagedIdempotency)} {@link #handle} and {@link #handleIn},
 * {@link #builder(Idempotency)} {@link #handleIn} only, and {@link #builder(LeasedIdempotency)}
 * {@link #handleLeased} only, for a store without transactions; a mode the layer lacks throws
 * {@link IllegalStateException} saying how to build it.
 * {@link #builder(KeyPolicy)} has none: a server that runs an engine of its own (the R2DBC one,
 * without blocking) takes the layer's decisions from {@link #admit} and {@link #answer(Outcome)}.
 *
 * <p>The layer's own answers (400, 409, 422) are never recorded: a client that fixes its request, or
 * waits, gets a fresh judgement. The response the handler returns is sent as it is; what is recorded
 * and replayed is its status, its body and the headers chosen for replay
 * ({@link Builder#replayedHeaders}: {@code Set-Cookie} and other per-client headers are left out
 * unless asked for).
 *
 * <p>Instances are immutable and thread-safe: build one per group of endpoints and share it.
 *
 * @param <C> the transaction type
 */
public final class HttpIdempotency<C> {

    /** The request header carrying the key: {@code Idempotency-Key}. */
    public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";
    /** The header added to a replayed response: {@code Idempotent-Replayed: true}. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";
    /** The response headers recorded and replayed by default; names compare without case. */
    public static final Set<String> DEFAULT_REPLAYED_HEADERS = Set.of("Content-Type", "Content-Language", "Content-Location",
            "Location", "ETag", "Last-Modified");
    /** The {@code Retry-After} of a 409 for a key held by an open transaction: 1 second. */
    public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);
    /**
     * The response header that {@link Builder#expiresHeader} names by default for the record's expiry
     * on replays and 409s: {@code Idempotency-Key-Expires}, an HTTP-date. No standard names one.
     */
    public static final String EXPIRES_HEADER = "Idempotency-Key-Expires";
    /** The IMF-fixdate form of an HTTP-date (RFC 9110, section 5.6.7), always in GMT. */
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ENGLISH)
            .withZone(ZoneOffset.UTC);
    /** Where the problem types are described; a type is this followed by its name. */
    public static final String PROBLEM_TYPES = "https://github.com/idempotency/idempotency-java/blob/main/docs/http.md#";

    private static final Logger log = LoggerFactory.getLogger(HttpIdempotency.class);
    /** The sizes in a recorded {@link ResultTooLargeException}'s message: "... is N bytes, over ... limit of L bytes ...". */
    private static final Pattern RECORDED_SIZES = Pattern.compile(" is ([0-9]{1,10}) bytes, over .*?limit of ([0-9]{1,10}) bytes");
    /** What became of a lease-mode handler whose response cannot be recorded. */
    private static final String LEASED_AFTERMATH = "The handler ran: what it did outside the server's database (a payment"
            + " provider's call) may have taken effect.";
    /** The form of a scope {@link #principalScope} makes from a digest: {@code ~} and 43 base64url characters. */
    /** What became of a transactional handler whose response cannot be recorded. */
    private static final String ROLLED_BACK = "Its database writes were rolled back.";
    private static final Pattern DIGEST_SCOPE = Pattern.compile("~[A-Za-z0-9_-]{43}");

    private final @Nullable Idempotency<C> engine;
    private final @Nullable ManagedIdempotency<C> managed;
    private final @Nullable LeasedIdempotency<C> leased;
    private final KeyPolicy keyPolicy;
    private final String keyHeader;
    private final boolean keyRequired;
    private final Function<Request, Fingerprint> fingerprint;
    private final Set<String> replayedHeaders;
    private final Duration retryAfter;
    private final Function<Outcome.Failed<Response>, Response> failureResponse;
    private final ResultCodec<Response> recorded;
    private final ServerErrors serverErrors;
    private final @Nullable String expiresHeader;
    /** This layer with the other {@link ServerErrors} choice, built once with it: each is the other's. */
    private final HttpIdempotency<C> counterpart;

    private HttpIdempotency(HttpIdempotency<C> layer, ServerErrors serverErrors) {
        this.engine = layer.engine;
        this.managed = layer.managed;
        this.leased = layer.leased;
        this.keyPolicy = layer.keyPolicy;
        this.keyHeader = layer.keyHeader;
        this.keyRequired = layer.keyRequired;
        this.fingerprint = layer.fingerprint;
        this.replayedHeaders = layer.replayedHeaders;
        this.retryAfter = layer.retryAfter;
        this.failureResponse = layer.failureResponse;
        this.recorded = layer.recorded;
        this.serverErrors = serverErrors;
        this.expiresHeader = layer.expiresHeader;
        this.counterpart = layer;
    }

    private HttpIdempotency(Builder<C> b) {
        this.engine = b.engine;
        this.managed = b.managed;
        this.leased = b.leased;
        this.keyPolicy = b.keyPolicy;
        this.keyHeader = b.keyHeader;
        this.keyRequired = b.keyRequired;
        this.fingerprint = b.fingerprint;
        this.replayedHeaders = b.replayedHeaders;
        this.retryAfter = b.retryAfter;
        this.failureResponse = b.failureResponse;
        this.recorded = new RecordedResponses(replayedHeaders);
        this.serverErrors = b.serverErrors;
        this.expiresHeader = b.expiresHeader;
        this.counterpart = new HttpIdempotency<>(this, b.serverErrors == ServerErrors.RECORD ? ServerErrors.RELEASE : ServerErrors.RECORD);
    }

    /**
     * This layer with another choice for a handler's 5xx responses, for the endpoints that differ
     * (an adapter's per-handler setting): the same engine, key rules and headers, so that the two
     * share their records.
     *
     * @param serverErrors what the returned layer does with a handler's 5xx response
     * @return this layer if it already does so, else its one counterpart that does, built with it:
     *     every call for the same choice returns the same object, and none allocates
     */
    public HttpIdempotency<C> withServerErrors(ServerErrors serverErrors) {
        Objects.requireNonNull(serverErrors, "serverErrors");
        return serverErrors == this.serverErrors ? this : counterpart;
    }

    /**
     * The layer for a handler whose annotation names its choice for a 5xx, the one decision every
     * framework adapter takes: no choice gives this layer, one gives {@link #withServerErrors} of it
     * (the same object on every call, no allocation per request). Thread-safe, like the layer.
     *
     * @param choices the annotation's {@code serverErrors()}: none, or the one choice
     * @param annotation the annotation's name for the message, {@code "@IdempotentEndpoint"} say
     * @param handler the handler for the message, {@code "the handler of POST /orders"} say
     * @return this layer for no choice, else the layer for the one named
     * @throws IllegalStateException if more than one choice is named
     */
    public HttpIdempotency<C> forHandler(ServerErrors[] choices, String annotation, String handler) {
        if (choices.length > 1) {
            throw new IllegalStateException(annotation + " on " + handler + " names " + choices.length
                    + " serverErrors choices; name one (RECORD or RELEASE), or none for the layer's");
        }
        return choices.length == 0 ? this : withServerErrors(choices[0]);
    }

    /** @return what this layer does with a handler's 5xx response ({@link ServerErrors#RECORD} by default) */
    public ServerErrors serverErrors() {
        return serverErrors;
    }

    /**
     * A layer whose handlers run in transactions the library begins and commits ({@link #handle}), or
     * in the server's own ({@link #handleIn}).
     *
     * @param managed the engine with its transactions and retry policy
     * @param <C> the transaction type
     * @return a builder with the defaults
     */
    public static <C> Builder<C> builder(ManagedIdempotency<C> managed) {
        Objects.requireNonNull(managed, "managed");
        return new Builder<>(managed.engine(), managed, null, managed.engine().keyPolicy());
    }

    /**
     * A layer whose handlers run in transactions the library begins and commits ({@link #handle}), or
     * in lease mode ({@link #handleLeased}), or in the server's own ({@link #handleIn}): for a store
     * with transactions that keeps leases (the JDBC store).
     *
     * @param managed the engine with its transactions and retry policy
     * @param leased the lease-mode engine over the same store, from
     *     {@link LeasedIdempotency#of(ManagedIdempotency, dev.idempotency.spi.LeasingStore)}
     * @param <C> the transaction type
     * @return a builder with the defaults
     */
    public static <C> Builder<C> builder(ManagedIdempotency<C> managed, LeasedIdempotency<C> leased) {
        Objects.requireNonNull(managed, "managed");
        Objects.requireNonNull(leased, "leased");
        return new Builder<>(managed.engine(), managed, leased, managed.engine().keyPolicy());
    }

    /**
     * A layer whose handlers run only in lease mode ({@link #handleLeased}): for a store without
     * transactions (Redis, DynamoDB), over {@link LeasedIdempotency#of(dev.idempotency.spi.LeaseOnlyStore)}.
     *
     * @param leased the lease-mode engine
     * @param <C> the transaction type
     * @return a builder with the defaults
     */
    public static <C> Builder<C> builder(LeasedIdempotency<C> leased) {
        Objects.requireNonNull(leased, "leased");
        return new Builder<>(null, null, leased, leased.keyPolicy());
    }

    /**
     * A layer whose handlers run only in the server's own transactions ({@link #handleIn}).
     *
     * @param engine the engine
     * @param <C> the transaction type
     * @return a builder with the defaults
     */
    public static <C> Builder<C> builder(Idempotency<C> engine) {
        Objects.requireNonNull(engine, "engine");
        return new Builder<>(engine, null, null, engine.keyPolicy());
    }

    /**
     * A layer of decisions only, for a server whose engine is not one of this module's types (the
     * R2DBC engine of a reactive server): it keys requests ({@link #admit}) and answers outcomes
     * ({@link #answer(Outcome)}) without running anything, and has none of the three modes, each of
     * which throws {@link IllegalStateException}.
     *
     * @param keyPolicy the key policy of the engine that runs the calls
     * @param <C> the transaction type, unused
     * @return a builder with the defaults
     */
    public static <C> Builder<C> builder(KeyPolicy keyPolicy) {
        Objects.requireNonNull(keyPolicy, "keyPolicy");
        return new Builder<>(null, null, null, keyPolicy);
    }

    /**
     * Runs {@code handler} at most once for the request's key, in a transaction the library begins and
     * commits (mode 1). An unkeyed request runs in a transaction too, and is not recorded.
     *
     * @param request the request
     * @param scope the authenticated client (or tenant): one scope's key never reaches another's record
     * @param handler the handler
     * @param <X> the handler's checked exception
     * @return the answer; never {@code null}
     * @throws X the handler's own exception, unchanged: nothing was recorded, the transaction rolled back
     * @throws IllegalStateException if this layer was built without a {@link ManagedIdempotency}
     * @throws dev.idempotency.IdempotencyException if the store or the database fails (a response over
     *     the result size limit is answered {@code response-too-large} instead, see the table above)
     */
    public <X extends Exception> HttpAnswer handle(Request request, String scope, TxHandler<C, X> handler) throws X {
        Objects.requireNonNull(handler, "handler");
        ManagedIdempotency<C> transactions = managed("handle");
        Keyed keyed = keyOf(request, scope);
        if (keyed.refusal != null) {
            return keyed.refusal;
        }
        if (keyed.key == null) {
            return new HttpAnswer(transactions.transactions().inTransaction(tx -> run(handler, request, tx)), HttpAnswer.Kind.UNKEYED);
        }
        Outcome<Response> outcome;
        try {
            outcome = transactions.execute(call(keyed.key, request), tx -> released(run(handler, request, tx)));
        } catch (ResultTooLargeException tooLarge) { // rolled back, the handler's writes with it: nothing of the key is kept
            return recordTooLarge(transactions, keyed.key, request, tooLarge);
        } catch (ReleaseKeyException released) { // rolled back, the claim with the handler's writes
            return releasedAnswer(keyed.key, released, "its transaction was rolled back, the handler's writes with the key's claim");
        }
        return answer(outcome);
    }

    /**
     * Records, in a short transaction of its own after the rollback, the {@code response-too-large}
     * problem as the key's answer, so that no retry runs the handler again; if the policy's limit is
     * too small even for the problem, it is answered unrecorded.
     */
    private HttpAnswer recordTooLarge(ManagedIdempotency<C> transactions, IdempotencyKey key, Request request,
                                      ResultTooLargeException tooLarge) {
        Response problem = tooLargeProblem(key, tooLarge);
        Outcome<Response> recordedProblem;
        try {
            recordedProblem = transactions.execute(call(key, request), tx -> problem);
        } catch (ResultTooLargeException evenTheProblem) {
            return tooLargeUnrecorded(key, tooLarge);
        }
        return answerTooLarge(recordedProblem);
    }

    /**
     * For a server that runs the transactional mode itself ({@link #builder(KeyPolicy)}): the
     * {@code response-too-large} problem to record as the key's answer, in a transaction of its own,
     * after the one whose handler's response was over the limit has rolled back, so that no retry
     * runs the handler again (as {@link #handle} does). Record it with {@link #admit}'s call, then
     * answer with {@link #answerTooLarge}, or {@link #tooLargeUnrecorded} if even the problem is too large.
     *
     * @param key the request's key
     * @param tooLarge what the engine threw for the handler's response
     * @return the 500 problem, naming the size and the limit
     */
    public Response tooLargeProblem(IdempotencyKey key, ResultTooLargeException tooLarge) {
        log.warn("Key {}: the handler's response cannot be recorded ({}); its writes were rolled back, and the key's answer is"
                + " recorded as a 500 response-too-large problem", key, tooLarge.reason());
        return tooLarge(key, tooLarge.size(), tooLarge.limit(), ROLLED_BACK, true);
    }

    /**
     * @param recordedProblem the outcome of recording {@link #tooLargeProblem}
     * @return the answer: that problem, or the answer another attempt recorded meanwhile
     */
    public HttpAnswer answerTooLarge(Outcome<Response> recordedProblem) {
        // another attempt may have recorded its own answer meanwhile: then that is the key's answer
        return recordedProblem.status() == Outcome.Status.EXECUTED ? new HttpAnswer(recordedProblem.value(), HttpAnswer.Kind.FAILED)
                : answer(recordedProblem);
    }

    /**
     * @param key the request's key
     * @param tooLarge what the engine threw for the handler's response
     * @return the answer when not even the {@link #tooLargeProblem} fits in the record: the problem,
     *     saying that nothing of the key is kept
     */
    public HttpAnswer tooLargeUnrecorded(IdempotencyKey key, ResultTooLargeException tooLarge) {
        log.warn("Key {}: the response-too-large problem is over the limit as well; answered, not recorded", key);
        return new HttpAnswer(tooLarge(key, tooLarge.size(), tooLarge.limit(), ROLLED_BACK, false), HttpAnswer.Kind.FAILED);
    }

    /**
     * The answer to a handler's response that cannot be recorded: 500, {@code response-too-large},
     * naming the size and the limit when known (-1 if not), and what became of the handler's work.
     */
    private static Response tooLarge(IdempotencyKey key, long size, long limit, String aftermath, boolean recorded) {
        String sizes = size < 0 || limit < 0 ? "over the size that the server can record for a key"
                : size + " bytes once encoded, over the " + limit + " bytes that the server can record for a key";
        return Problems.of(500, PROBLEM_TYPES + "response-too-large", "Response too large", "The response to this request is "
                + sizes + ", so it was not sent. " + aftermath + (recorded
                        ? " The operation is recorded as failed: every retry with this key gets this answer."
                        : " Not even this answer fits in the record, so nothing of the key is kept: a retry runs the request again."),
                key.id());
    }

    /**
     * Runs {@code handler} at most once for the request's key, in the server's open transaction
     * (mode 2), which the server then commits, or rolls back if the handler threw or
     * {@link HttpAnswer#rollbackRequired()}.
     *
     * @param tx the server's open transaction
     * @param request the request
     * @param scope the authenticated client (or tenant)
     * @param handler the handler, given {@code tx}
     * @param <X> the handler's checked exception
     * @return the answer; never {@code null}
     * @throws X the handler's own exception, unchanged: roll back
     * @throws dev.idempotency.TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws dev.idempotency.IdempotencyException if the store fails or the response cannot be recorded: roll back
     */
    public <X extends Exception> HttpAnswer handleIn(C tx, Request request, String scope, TxHandler<C, X> handler) throws X {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(handler, "handler");
        Keyed keyed = keyOf(request, scope);
        if (keyed.refusal != null) {
            return keyed.refusal;
        }
        if (keyed.key == null) {
            return new HttpAnswer(run(handler, request, tx), HttpAnswer.Kind.UNKEYED);
        }
        if (engine == null) {
            throw new IllegalStateException("handleIn records the key in the server's transaction: build the layer with"
                    + " HttpIdempotency.builder(Idempotency) or builder(ManagedIdempotency), over a transactional store");
        }
        try {
            return answer(engine.execute(call(keyed.key, request), tx, () -> released(run(handler, request, tx))));
        } catch (ReleaseKeyException released) { // the claim released in tx: the server rolls tx back (rollbackRequired)
            return answerReleased(keyed.key, released);
        }
    }

    /**
     * Mode 2 in two steps, for a framework that runs the handler itself between a filter before it
     * and one after it (see {@link PendingResponse}): judges the request in the server's open
     * transaction now, by the table above (the refusals, a replay, 409, 422, a recorded failure), and
     * claims its key there; the handler's response is recorded later by
     * {@link PendingResponse#complete}, in the same transaction, which the server then commits. A
     * handler that throws is rolled back with the claim.
     *
     * @param tx the server's open transaction, which must stay open until {@code complete}
     * @param request the request
     * @param scope the authenticated client (or tenant)
     * @return the pending response; never {@code null}
     * @throws IllegalStateException if this layer was built for lease mode only
     * @throws dev.idempotency.TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws dev.idempotency.IdempotencyException if the store fails: roll back
     */
    public PendingResponse beginIn(C tx, Request request, String scope) {
        Objects.requireNonNull(tx, "tx");
        Keyed keyed = keyOf(request, scope);
        if (keyed.refusal != null) {
            return new PendingResponse(keyed.refusal, null, this::complete);
        }
        if (keyed.key == null) {
            return new PendingResponse(null, null, this::complete);
        }
        if (engine == null) {
            throw new IllegalStateException("beginIn records the key in the server's transaction: build the layer with"
                    + " HttpIdempotency.builder(Idempotency) or builder(ManagedIdempotency), over a transactional store");
        }
        PendingCall<Response> pending = engine.begin(call(keyed.key, request), tx);
        return pending.claimed() ? new PendingResponse(null, pending, this::complete) : new PendingResponse(answer(pending.answer()), null,
                this::complete);
    }

    /** Records the handler's response for a claim of {@link #beginIn}; a released 5xx releases the claim instead. */
    private HttpAnswer complete(PendingCall<Response> claimed, Response response) {
        try {
            return answer(claimed.complete(released(response)));
        } catch (ReleaseKeyException released) { // thrown before anything was recorded: the server rolls tx back
            claimed.release();
            return answerReleased(claimed.key(), released);
        }
    }

    /**
     * Runs {@code handler} at most once to completion for the request's key, in lease mode (mode 3):
     * outside any transaction, its response recorded fenced by the attempt's lease. An unkeyed
     * request runs the handler with no attempt, and is not recorded.
     *
     * @param request the request
     * @param scope the authenticated client (or tenant)
     * @param handler the handler, given its attempt
     * @param <X> the handler's checked exception
     * @return the answer; never {@code null}
     * @throws X the handler's own exception, unchanged: nothing was recorded, the lease was ended
     * @throws IllegalStateException if this layer was built without a {@link LeasedIdempotency}
     * @throws dev.idempotency.IdempotencyException if the store fails (a response over the result size
     *     limit is answered {@code response-too-large} instead, see the table above)
     */
    public <X extends Exception> HttpAnswer handleLeased(Request request, String scope, LeasedHandler<X> handler) throws X {
        Objects.requireNonNull(handler, "handler");
        LeasedIdempotency<C> leases = leased();
        Keyed keyed = keyOf(request, scope);
        if (keyed.refusal != null) {
            return keyed.refusal;
        }
        if (keyed.key == null) {
            return new HttpAnswer(nonNull(handler.handle(request, null)), HttpAnswer.Kind.UNKEYED);
        }
        try {
            return answer(leases.lease(call(keyed.key, request), attempt -> released(nonNull(handler.handle(request, attempt)))));
        } catch (ReleaseKeyException released) { // the engine ended the lease: the retry takes the key over at once
            return releasedAnswer(keyed.key, released, "the lease was ended, so that a retry takes the key over at once");
        } catch (StoreUnavailableException unavailable) {
            log.warn("Key {}: the store is unreachable; answering 503: {}", keyed.key, unavailable.getMessage());
            Response problem = Problems.of(503, PROBLEM_TYPES + "store-unavailable", "Idempotency store unavailable",
                    "The store that keeps idempotency keys cannot be reached, so the request was not run: running it could"
                            + " repeat an operation. Retry with the same key after the Retry-After delay.", keyed.key.id())
                    .withHeader("Retry-After", Long.toString(Math.max(1, (unavailable.retryAfter().toMillis() + 999) / 1000)));
            return new HttpAnswer(problem, HttpAnswer.Kind.STORE_UNAVAILABLE);
        } catch (ResultTooLargeException tooLarge) { // the engine recorded the operation as failed: every retry gets it back
            log.warn("Key {}: the handler's response cannot be recorded ({}); answering 500 response-too-large", keyed.key,
                    tooLarge.reason());
            return new HttpAnswer(tooLarge(keyed.key, tooLarge.size(), tooLarge.limit(), LEASED_AFTERMATH, true), HttpAnswer.Kind.FAILED);
        } catch (LeaseLostException lost) {
            log.debug("Key {}: the attempt lost its lease; answering 409", keyed.key);
            return inProgress(keyed.key, null, "This attempt ran longer than its lease and another attempt took the key over."
                    + " Retry with the same key to get that attempt's response.");
        }
    }

    /**
     * The scope for the name of an authenticated principal, valid whatever the name: for a scope
     * function that takes the user ({@link JdkHttpHandler#authenticatedUser()} uses it). A name that
     * is a valid scope under the default key policy (1 to 64 printable ASCII characters without
     * spaces) is its own scope, so that the records kept under it still match. Any other name (with
     * a space, a non-ASCII letter, over 64 characters, empty) becomes {@code ~} followed by the
     * SHA-256 digest of its UTF-8 bytes in unpadded base64url: 44 characters, the same for the same
     * name on every server. A valid name of that very form ({@code ~} and 43 base64url characters)
     * is digested as well, so that no name can take another's scope.
     *
     * <p>Thread-safe: a pure function.
     *
     * @param name the principal's name
     * @return its scope: valid under any key policy whose {@code maxScopeLength} is 44 or more
     */
    public static String principalScope(String name) {
        Objects.requireNonNull(name, "name");
        if (!DIGEST_SCOPE.matcher(name).matches() && isValidScope(name)) {
            return name;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return "~" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256, which every Java platform must have", e);
        }
    }

    private static boolean isValidScope(String name) {
        try {
            KeyPolicy.ofDefaults().validateScope(name);
            return true;
        } catch (InvalidKeyException e) {
            return false;
        }
    }

    /**
     * @param request a request
     * @return its fingerprint, as this layer computes it
     */
    public Fingerprint fingerprint(Request request) {
        return Objects.requireNonNull(fingerprint.apply(request), "the fingerprint function returned null");
    }

    /** @return the call of a keyed request: its key, its fingerprint, and the codec of the recorded response */
    private IdempotentCall<Response> call(IdempotencyKey key, Request request) {
        return IdempotentCall.of(key, recorded).withFingerprint(fingerprint(request));
    }

    private LeasedIdempotency<C> leased() {
        if (leased == null) {
            throw new IllegalStateException("handleLeased runs lease mode: build the layer with HttpIdempotency.builder(LeasedIdempotency),"
                    + " or builder(ManagedIdempotency, LeasedIdempotency) for a store with transactions that keeps leases");
        }
        return leased;
    }

    private ManagedIdempotency<C> managed(String method) {
        if (managed == null) {
            throw new IllegalStateException(method + " runs transactions of the library's own: build the layer with"
                    + " HttpIdempotency.builder(ManagedIdempotency), or call handleIn with the server's transaction");
        }
        return managed;
    }

    /**
     * The handler's response, to be recorded; a 5xx when this layer releases server errors is thrown
     * instead, in a {@link ReleaseKeyException} that the engine never records (not even as a final
     * failure) and rethrows once it has rolled back, released the claim or ended the lease. This
     * layer's modes apply it themselves; a server that runs an engine of its own
     * ({@link #builder(KeyPolicy)}) applies it to the handler's response inside the engine's work,
     * rolls the transaction back when the engine rethrows, and answers {@link #answerReleased}.
     *
     * @param response the handler's response
     * @return that response, when this layer records it
     * @throws ReleaseKeyException carrying the response, when this layer releases it
     */
    public Response released(Response response) {
        if (serverErrors == ServerErrors.RELEASE && response.status() >= 500 && response.status() <= 599) {
            throw new ReleaseKeyException("the handler answered " + response.status() + " and server errors are released", response);
        }
        return response;
    }

    /**
     * The answer to a 5xx that {@link #released} threw, once the engine released the key's claim: for
     * a server that runs an engine of its own, whose transaction must roll back
     * ({@link HttpAnswer#rollbackRequired()}).
     *
     * @param key the request's key
     * @param released what {@link #released} threw and the engine rethrew
     * @return the handler's 5xx, {@link HttpAnswer.Kind#RELEASED}
     * @throws ReleaseKeyException {@code released} itself, if it does not carry a response of this layer's
     */
    public HttpAnswer answerReleased(IdempotencyKey key, ReleaseKeyException released) {
        return releasedAnswer(key, released, "the key's claim was released; the server's transaction must roll back");
    }

    /** The answer to a released 5xx, which the engine carried out of the attempt; {@code how} says what became of the key. */
    private static HttpAnswer releasedAnswer(IdempotencyKey key, ReleaseKeyException released, String how) {
        if (!(released.answer() instanceof Response response)) {
            throw released; // not this layer's: the handler's own exception
        }
        log.debug("Key {}: the handler answered {}, not recorded: {}", key, response.status(), how);
        return new HttpAnswer(response, HttpAnswer.Kind.RELEASED);
    }

    private static <C, X extends Exception> Response run(TxHandler<C, X> handler, Request request, C tx) throws X {
        return nonNull(handler.handle(request, tx));
    }

    private static Response nonNull(@Nullable Response response) {
        return Objects.requireNonNull(response, "the handler returned no response (null)");
    }

    /** The key of a request, or the answer that refuses it, or neither (an unkeyed request). */
    private record Keyed(@Nullable IdempotencyKey key, @Nullable HttpAnswer refusal) {
    }

    /**
     * What the layer makes of a request before anything runs, for a server that runs the engine
     * itself ({@link #builder(KeyPolicy)}, a non-blocking server): exactly one of a refusal to send
     * as it is, a call to run (its key, the request's fingerprint and the codec of the recorded
     * response), or neither (a safe method, or no key where none is required: run the handler
     * unkeyed, record nothing). Immutable and thread-safe.
     *
     * @param call the call to run with the engine, then answer with {@link #answer(Outcome)}
     * @param refusal the answer that refuses the request (400; 500 for a scope that the policy refuses)
     */
    public record Admission(@Nullable IdempotentCall<Response> call, @Nullable HttpAnswer refusal) {
    }

    /**
     * Keys a request, by the table above, without running anything: the first half of
     * {@link #handleIn} for an engine that this layer does not call.
     *
     * @param request the request
     * @param scope the authenticated client (or tenant)
     * @return the admission: a refusal, a call, or neither
     */
    public Admission admit(Request request, String scope) {
        Keyed keyed = keyOf(request, scope);
        return new Admission(keyed.key == null ? null : call(keyed.key, request), keyed.refusal);
    }

    private Keyed keyOf(Request request, String scope) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(scope, "scope");
        if (request.isSafe()) {
            return new Keyed(null, null);
        }
        List<String> values = request.headerValues(keyHeader);
        if (values.isEmpty()) {
            if (!keyRequired) {
                return new Keyed(null, null);
            }
            return refuse("key-missing", "Idempotency-Key missing", "This endpoint requires an " + keyHeader
                    + " header: a new unique key (a UUID) for each operation, and the same key on every retry of it.", null);
        }
        if (values.size() > 1) {
            return refuse("key-malformed", "Idempotency-Key malformed", "The request has " + values.size() + " " + keyHeader
                    + " headers; send exactly one.", String.join(", ", values));
        }
        String raw = values.get(0);
        String id = raw.strip();
        if (id.startsWith("\"")) { // a structured-field string, as the IETF draft writes it
            if (id.length() < 2 || !id.endsWith("\"") || id.substring(1, id.length() - 1).matches(".*[\"\\\\].*")) {
                return refuse("key-malformed", "Idempotency-Key malformed", "The " + keyHeader
                        + " header starts with a quote but is not one quoted string without quotes or backslashes inside.", raw);
            }
            id = id.substring(1, id.length() - 1);
        }
        try {
            keyPolicy.validateScope(scope);
        } catch (InvalidKeyException e) { // the server's fault, not the client's: no retry can mend it
            log.error("The scope '{}' given for {} {} is not a valid key scope: {}; answering 500. The server's scopes must be"
                    + " 1 to {} printable ASCII characters without spaces (HttpIdempotency.principalScope maps any user name to"
                    + " one of 44 at most)", scope, request.method(), request.target(), rule(e), keyPolicy.maxScopeLength());
            return new Keyed(null, new HttpAnswer(Problems.of(500, PROBLEM_TYPES + "scope-invalid", "Scope invalid", "The server"
                    + " keeps this client's keys under a scope that its key policy refuses. Nothing ran, and the server will refuse"
                    + " every request with a key from this client the same way until its mapping of clients to scopes is fixed.",
                    raw), HttpAnswer.Kind.KEY_REFUSED));
        }
        try {
            return new Keyed(keyPolicy.validate(IdempotencyKey.of(scope, id)), null);
        } catch (InvalidKeyException e) {
            return refuse("key-malformed", "Idempotency-Key malformed", "The " + keyHeader + " header is not a valid key: "
                    + rule(e) + ".", raw);
        }
    }

    /** The rule a refused key broke, without the scope (the message's prefix). */
    private static String rule(InvalidKeyException e) {
        String message = String.valueOf(e.getMessage());
        int at = message.indexOf("invalid key: ");
        return at < 0 ? message : message.substring(at + "invalid key: ".length());
    }

    private Keyed refuse(String type, String title, String detail, @Nullable String key) {
        return new Keyed(null, new HttpAnswer(Problems.of(400, PROBLEM_TYPES + type, title, detail, key), HttpAnswer.Kind.KEY_REFUSED));
    }

    /**
     * The answer to the outcome of an {@link #admit admitted} call, by the table above: the second
     * half of {@link #handleIn}. After {@link HttpAnswer#rollbackRequired()}, roll the transaction back.
     *
     * @param outcome the engine's outcome for the admission's call
     * @return the answer
     */
    public HttpAnswer answer(Outcome<Response> outcome) {
        IdempotencyKey key = outcome.key();
        switch (outcome.status()) {
            case EXECUTED:
                return new HttpAnswer(outcome.value(), HttpAnswer.Kind.EXECUTED);
            case REPLAYED:
                return new HttpAnswer(expiring(outcome.value().withHeader(REPLAYED_HEADER, "true"),
                        ((Outcome.Replayed<Response>) outcome).expiresAt()), HttpAnswer.Kind.REPLAYED);
            case IN_PROGRESS:
                Outcome.InProgress<Response> held = (Outcome.InProgress<Response>) outcome;
                HttpAnswer busy = inProgress(key, held.leaseRemaining(),
                        "A request with this key is still being processed. Retry with the same key after the Retry-After delay.");
                return new HttpAnswer(expiring(busy.response(), held.expiresAt()), busy.kind());
            case MISMATCH:
                return new HttpAnswer(Problems.of(422, PROBLEM_TYPES + "key-reused", "Idempotency-Key reused",
                        "This key was first used for a different request (another method, target or body). Send a new key for a"
                                + " new operation.", key.id()), HttpAnswer.Kind.MISMATCH);
            default:
                Outcome.Failed<Response> failed = (Outcome.Failed<Response>) outcome;
                Response response = failed.errorType().equals(ResultTooLargeException.class.getName())
                        ? tooLargeReplay(failed)
                        : Objects.requireNonNull(failureResponse.apply(failed), "the failure response function returned null");
                return new HttpAnswer(failed.replayed() ? response.withHeader(REPLAYED_HEADER, "true") : response, HttpAnswer.Kind.FAILED);
        }
    }

    /** The {@code response-too-large} of a lease-mode record, its size and limit read back from the recorded message. */
    private static Response tooLargeReplay(Outcome.Failed<Response> failed) {
        Matcher sizes = RECORDED_SIZES.matcher(String.valueOf(failed.errorMessage()));
        return sizes.find() ? tooLarge(failed.key(), Long.parseLong(sizes.group(1)), Long.parseLong(sizes.group(2)), LEASED_AFTERMATH, true)
                : tooLarge(failed.key(), -1, -1, LEASED_AFTERMATH, true);
    }

    /**
     * The response with the record's expiry in the header {@link Builder#expiresHeader} names, as an
     * HTTP-date rounded down to the second (the record may answer a little longer, never shorter);
     * unchanged if the header is off or the expiry unknown.
     */
    private Response expiring(Response response, @Nullable Instant expiresAt) {
        return expiresHeader == null || expiresAt == null ? response : response.withHeader(expiresHeader, HTTP_DATE.format(expiresAt));
    }

    private HttpAnswer inProgress(IdempotencyKey key, @Nullable Duration leaseRemaining, String detail) {
        long seconds = retryAfterSeconds(leaseRemaining);
        Response problem = Problems.of(409, PROBLEM_TYPES + "key-in-progress", "Idempotency-Key in progress", detail, key.id())
                .withHeader("Retry-After", Long.toString(seconds));
        return new HttpAnswer(problem, HttpAnswer.Kind.IN_PROGRESS);
    }

    /**
     * Whole seconds, rounded up, at least one: the lease's remaining time as the store measured it
     * (by its own clock, never this node's), else the configured delay.
     */
    private long retryAfterSeconds(@Nullable Duration leaseRemaining) {
        Duration wait = leaseRemaining == null ? retryAfter : leaseRemaining;
        long millis = wait.toMillis();
        return Math.max(1, (millis + 999) / 1000);
    }

    /** The default answer to a recorded final failure: 500, a problem naming the key, no exception message. */
    private static Response defaultFailureResponse(Outcome.Failed<Response> failed) {
        return Problems.of(500, PROBLEM_TYPES + "operation-failed", "Operation failed", "The operation failed with a failure"
                + " recorded as final; every retry with this key gets this answer.", failed.key().id());
    }

    @Override
    public String toString() {
        return "HttpIdempotency[" + (managed != null ? managed : engine != null ? engine : leased != null ? leased : "decisions only") + ", keyHeader=" + keyHeader + ", keyRequired=" + keyRequired
                + ", replayedHeaders=" + replayedHeaders + ", serverErrors=" + serverErrors
                + (expiresHeader == null ? "" : ", expiresHeader=" + expiresHeader) + "]";
    }

    /** Records the status, the body and the headers chosen for replay. */
    private static final class RecordedResponses implements ResultCodec<Response> {
        private final Set<String> replayed;

        RecordedResponses(Set<String> replayed) {
            this.replayed = replayed;
        }

        @Override
        public String name() {
            return ResponseCodec.INSTANCE.name();
        }

        @Override
        public byte[] encode(Response response) {
            Map<String, List<String>> kept = new LinkedHashMap<>();
            response.headers().forEach((name, values) -> {
                if (replayed.contains(name)) {
                    kept.put(name, values);
                }
            });
            return ResponseCodec.INSTANCE.encode(Response.of(response.status(), kept, response.body()));
        }

        @Override
        public Response decode(byte[] bytes) {
            return ResponseCodec.INSTANCE.decode(bytes);
        }
    }

    /**
     * Builds an {@link HttpIdempotency}. Not thread-safe; what it builds is.
     *
     * @param <C> the transaction type
     */
    public static final class Builder<C> {
        private final @Nullable Idempotency<C> engine;
        private final @Nullable ManagedIdempotency<C> managed;
        private final @Nullable LeasedIdempotency<C> leased;
        private final KeyPolicy keyPolicy;
        private String keyHeader = DEFAULT_KEY_HEADER;
        private boolean keyRequired = true;
        private Function<Request, Fingerprint> fingerprint = r -> Fingerprint.ofParts(r.method(), r.target(), r.body());
        private Set<String> replayedHeaders = caseless(DEFAULT_REPLAYED_HEADERS);
        private Duration retryAfter = DEFAULT_RETRY_AFTER;
        private Function<Outcome.Failed<Response>, Response> failureResponse = HttpIdempotency::defaultFailureResponse;
        private ServerErrors serverErrors = ServerErrors.RECORD;
        private @Nullable String expiresHeader;

        private Builder(@Nullable Idempotency<C> engine, @Nullable ManagedIdempotency<C> managed, @Nullable LeasedIdempotency<C> leased,
                        KeyPolicy keyPolicy) {
            this.engine = engine;
            this.managed = managed;
            this.leased = leased;
            this.keyPolicy = keyPolicy;
        }

        private static Set<String> caseless(Set<String> names) {
            TreeSet<String> set = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
            set.addAll(names);
            return java.util.Collections.unmodifiableSet(set);
        }

        /**
         * @param name the request header that carries the key ({@value #DEFAULT_KEY_HEADER} by default)
         * @return this builder
         * @throws IllegalArgumentException if the name is empty or holds a character not allowed in a header name
         */
        public Builder<C> keyHeader(String name) {
            this.keyHeader = dev.idempotency.http.internal.HeaderMaps.checkName(name);
            return this;
        }

        /**
         * @param required whether an unsafe request without a key is refused with 400 ({@code true}, the
         *     default), or runs its handler unkeyed, as it would without this layer
         * @return this builder
         */
        public Builder<C> keyRequired(boolean required) {
            this.keyRequired = required;
            return this;
        }

        /**
         * The request's fingerprint: the same key with another fingerprint is answered 422. The default
         * digests the method, the target and the body's bytes. Supply your own to leave out what
         * changes between honest retries, such as a timestamp in the body:
         * {@code r -> Fingerprint.ofParts(r.method(), r.target(), json(r).get("amount"), json(r).get("currency"))}.
         *
         * @param fingerprint the request's fingerprint; must not return {@code null}
         * @return this builder
         */
        public Builder<C> fingerprint(Function<Request, Fingerprint> fingerprint) {
            this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
            return this;
        }

        /**
         * @param names the response headers recorded and replayed (names compare without case); the
         *     default is {@link #DEFAULT_REPLAYED_HEADERS}. Name {@code Set-Cookie} here only if every
         *     retry may receive the first response's cookies.
         * @return this builder
         * @throws IllegalArgumentException if a name is malformed
         */
        public Builder<C> replayedHeaders(Set<String> names) {
            Objects.requireNonNull(names, "names").forEach(dev.idempotency.http.internal.HeaderMaps::checkName);
            this.replayedHeaders = caseless(names);
            return this;
        }

        /**
         * @param retryAfter the {@code Retry-After} of a 409 for a key held by an open transaction (a
         *     leased key's 409 counts to its lease's end instead); rounded up to whole seconds, 1 second
         *     to 1 hour
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder<C> retryAfter(Duration retryAfter) {
            Objects.requireNonNull(retryAfter, "retryAfter");
            if (retryAfter.compareTo(Duration.ofSeconds(1)) < 0 || retryAfter.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("retryAfter must be between 1 second and 1 hour, was " + retryAfter);
            }
            this.retryAfter = retryAfter;
            return this;
        }

        /**
         * @param failureResponse the answer to a final failure that the key policy recorded (the
         *     default is a 500 problem that names the key but not the exception); the layer adds
         *     {@code Idempotent-Replayed: true} to a replay of it
         * @return this builder
         */
        public Builder<C> failureResponse(Function<Outcome.Failed<Response>, Response> failureResponse) {
            this.failureResponse = Objects.requireNonNull(failureResponse, "failureResponse");
            return this;
        }

        /**
         * What the layer does with a 5xx response that a keyed request's handler returns:
         * {@link ServerErrors#RECORD} (the default) records and replays it like any other status, so
         * that it is final for the key; {@link ServerErrors#RELEASE} records nothing of the key, rolls
         * the handler's writes back (or ends the lease), sends the 5xx as {@link HttpAnswer.Kind#RELEASED},
         * and the next retry with the key runs the handler again. {@link #withServerErrors} gives a
         * layer's other choice to the endpoints that differ.
         *
         * @param serverErrors what to do with a handler's 5xx response
         * @return this builder
         */
        public Builder<C> serverErrors(ServerErrors serverErrors) {
            this.serverErrors = Objects.requireNonNull(serverErrors, "serverErrors");
            return this;
        }

        /**
         * Advertises until when the key's record answers retries, in a response header of this name on
         * every replay and on a 409 whose record the store reported (a lease-mode key held by another
         * attempt): the record's expiry ({@code Outcome.Replayed.expiresAt}) as an HTTP-date in GMT,
         * rounded down to the second, for example
         * {@code Idempotency-Key-Expires: Thu, 03 Dec 2026 09:15:00 GMT}. Off by default.
         *
         * @param name the header's name ({@link #EXPIRES_HEADER}, say), or {@code null} to send none
         * @return this builder
         * @throws IllegalArgumentException if the name is empty or holds a character not allowed in a header name
         */
        public Builder<C> expiresHeader(@Nullable String name) {
            this.expiresHeader = name == null ? null : dev.idempotency.http.internal.HeaderMaps.checkName(name);
            return this;
        }

        /** @return the layer */
        public HttpIdempotency<C> build() {
            return new HttpIdempotency<>(this);
        }
    }
}
