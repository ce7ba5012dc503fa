package dev.idempotency.jakarta.rest;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.ServerErrors;
import dev.idempotency.jakarta.servlet.internal.Refusals;
import dev.idempotency.jakarta.transaction.JtaTransactions;
import jakarta.ws.rs.core.Feature;
import jakarta.ws.rs.core.FeatureContext;
import java.sql.Connection;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The {@code Idempotency-Key} header on any Jakarta REST runtime (Jersey, RESTEasy, ...), for the
 * resource methods annotated {@link IdempotentResource}: register this feature, and every such method runs
 * at most once per key, its response recorded with its database writes in one JTA transaction and
 * replayed byte for byte, marked {@code Idempotent-Replayed: true}. The answers are the HTTP layer's
 * table ({@link HttpIdempotency}: 400, 409 with {@code Retry-After}, 422, replays, recorded failures),
 * decided there.
 *
 * <p><b>The transaction.</b> Jakarta REST has no call around a resource method, only filters before
 * and after it, on the request's thread. The request filter therefore begins a JTA transaction
 * there ({@link JtaTransactions#begin()}), claims the key in it ({@link HttpIdempotency#beginIn}),
 * and leaves it on the thread; the resource method runs inside it: its connections of the same
 * managed {@code DataSource} are enlisted, and a {@code @Transactional} method (TxType
 * {@code REQUIRED}, the default, or {@code MANDATORY}) joins it, rather than committing a
 * transaction of its own before the response is recorded. The response filter (no body), or the
 * writer interceptor (once the body is written, into a buffer), records the response and commits;
 * the response is sent after the commit. A {@code REQUIRES_NEW} or {@code NOT_SUPPORTED} method
 * would commit its writes apart from the record: do not put one under {@code @IdempotentResource}.
 *
 * <p><b>Per request.</b> A safe method (GET, HEAD, OPTIONS, TRACE) passes through untouched. Any
 * other: no scope ({@link RestScope}, the {@code SecurityContext}'s principal by default): 401,
 * problem {@code unauthenticated}; a body over {@code maxRequestBytes} (1 MiB by default): 413,
 * problem {@code request-too-large}; then the layer answers by its table, or the resource method
 * runs and its response, whatever its status, is recorded. A resource method that throws records
 * nothing: the transaction rolls back with its writes and the claim, and the retry runs it again.
 * That holds for an exception that this feature maps (it maps those that nothing nearer maps, as
 * the runtime would: a {@code WebApplicationException}'s own response, else 500) and for one the
 * application maps after a {@code @Transactional} method marked the transaction for rollback; an
 * exception that the application maps to a response, in a method that leaves the transaction
 * active, is that response, recorded with the writes. A database conflict at the commit is
 * answered 500 and not retried in the request (a request cannot be dispatched twice): the client
 * retries. Final failures are not recorded in this form (no savepoint is taken); a response over
 * the key policy's size limit is rolled back and answered 500, unrecorded.
 *
 * <p><b>A 5xx.</b> A 5xx the resource method answers is recorded with its writes and replayed, by
 * default. Where server errors are released ({@link Builder#serverErrors}, or
 * {@link IdempotentResource#serverErrors()} for a method), it is sent as the method wrote it, the
 * transaction rolled back with the method's writes and the key's claim, and the retry runs the
 * method again: the layer's decision ({@link HttpIdempotency#released}).
 *
 * <p>Synchronous resource methods only: one that suspends an {@code AsyncResponse} would answer on
 * another thread, outside the transaction. Register the feature after authentication's filters
 * (the request filter has priority {@code USER}). Immutable and thread-safe: one serves every request.
 */
public final class IdempotencyRestFeature implements Feature {

    /** The largest request body read by default, in bytes: 1 MiB. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1 << 20;

    private final IdempotencyRestFilters filter;

    private IdempotencyRestFeature(Builder b) {
        HttpIdempotency<Connection> layer = b.serverErrors == null ? b.layer : b.layer.withServerErrors(b.serverErrors);
        this.filter = new IdempotencyRestFilters(layer, b.transactions, b.scope, b.maxRequestBytes);
    }

    /**
     * @param layer the HTTP layer, over a transactional store of JDBC connections
     *     ({@code HttpIdempotency.builder(Idempotency)} or {@code builder(ManagedIdempotency)})
     * @param transactions the JTA transactions, on the managed data source that the store and the
     *     resource methods share
     * @return a builder: the principal's scope, 1 MiB bodies
     */
    public static Builder builder(HttpIdempotency<Connection> layer, JtaTransactions transactions) {
        return new Builder(layer, transactions);
    }

    /**
     * @return the filters that {@link #configure} registers, for a runtime that discovers providers
     *     as classes (Quarkus REST), whose own class, bound by {@link IdempotentResource}, delegates to them
     */
    public IdempotencyRestFilters filters() {
        return filter;
    }

    @Override
    public boolean configure(FeatureContext context) {
        context.register(filter);
        context.register(new ResourceFailures());
        return true;
    }

    @Override
    public String toString() {
        return "IdempotencyRestFeature[" + filter + "]";
    }

    /** Builds an {@link IdempotencyRestFeature}. Not thread-safe; the feature it builds is. */
    public static final class Builder {
        private final HttpIdempotency<Connection> layer;
        private final JtaTransactions transactions;
        private RestScope scope = RestScope.userPrincipal();
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private @Nullable ServerErrors serverErrors;

        private Builder(HttpIdempotency<Connection> layer, JtaTransactions transactions) {
            this.layer = Objects.requireNonNull(layer, "layer");
            this.transactions = Objects.requireNonNull(transactions, "transactions");
        }

        /**
         * @param scope the scope of a request's key (default {@link RestScope#userPrincipal()})
         * @return this builder
         */
        public Builder scope(RestScope scope) {
            this.scope = Objects.requireNonNull(scope, "scope");
            return this;
        }

        /**
         * @param maxRequestBytes the largest body read, in bytes (default 1 MiB); a larger one is answered 413
         * @return this builder
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = Refusals.maxRequestBytes(maxRequestBytes);
            return this;
        }

        /**
         * What the feature does with a 5xx a resource method answers, in place of its layer's choice
         * ({@link HttpIdempotency#serverErrors()}, {@link ServerErrors#RECORD} unless the layer was
         * built otherwise), for the methods whose {@link IdempotentResource} does not say:
         * {@link ServerErrors#RELEASE} records nothing of the key, rolls the transaction back with the
         * method's writes, sends the 5xx, and lets the retry run the method again. The records are
         * the layer's either way.
         *
         * @param serverErrors what to do with a resource method's 5xx
         * @return this builder
         */
        public Builder serverErrors(ServerErrors serverErrors) {
            this.serverErrors = Objects.requireNonNull(serverErrors, "serverErrors");
            return this;
        }

        /** @return the feature */
        public IdempotencyRestFeature build() {
            return new IdempotencyRestFeature(this);
        }
    }
}
