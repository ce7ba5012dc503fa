package dev.idempotency.dynamodb;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.MissingTableException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbResponse;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * The DynamoDB store of lease mode ({@link LeaseOnlyStore}): every primitive is one conditional
 * write of the key's item, so that no two claims can both take a key, and no attempt that lost its
 * lease can write over the one that holds it.
 *
 * <ul>
 *   <li><b>claim</b>: a conditional {@code PutItem} of a new record, attempt 1 with the request's
 *       owner token, if the key has no item or only an expired one. If the condition fails
 *       ({@code ConditionalCheckFailedException}, which means "already there", never an error), the
 *       item that stopped it is read: returned with the failure
 *       ({@code ReturnValuesOnConditionCheckFailure.ALL_OLD}) where the server supports it, with a
 *       consistent {@code GetItem} otherwise (dynalite returns none). A completed or failed record
 *       is {@code Existing}; a live lease, or another fingerprint, is {@code Held}; an ended lease
 *       of the same fingerprint is taken over by a conditional {@code UpdateItem} on the item's
 *       version and owner as read, counting one more attempt and keeping the recovery point. A
 *       write that lost a race reads again.</li>
 *   <li><b>extend, checkpoint, complete, release</b>: one {@code UpdateItem} each, conditioned on the
 *       owner token, the status in progress and the record not expired.</li>
 *   <li><b>retention</b>: the record's expiry is kept in epoch milliseconds and checked on every
 *       read and in every condition, since DynamoDB's time to live deletes expired items late (up to
 *       days); the time-to-live attribute, in epoch seconds rounded up, lets the table delete them
 *       eventually. Reads are consistent ({@code ConsistentRead}).</li>
 * </ul>
 *
 * <p><b>The clock.</b> A condition expression has no "now" of the server's: the store writes and
 * compares times it computes, and the application nodes' own clocks may disagree by any amount.
 * So the store never reads the application's clock; it estimates the server's from the
 * {@code Date} header of every response and the round trip (one estimate per
 * {@link DynamoDbClient}, shared by the stores over it), see {@link ServerClock}, and judges
 * conservatively: a lease or a record counts as ended only once the earliest the server's time can
 * be has passed its end, and a new lease or expiry is counted from the latest it can be. A lease
 * therefore ends up to the estimate's uncertainty ({@link #clockUncertainty()}, a few tens of
 * milliseconds once calibrated, a second at worst) later than the server's clock alone would say.
 * This holds if the server's {@code Date} is no later than {@link Builder#serverDateLag} behind its
 * own clock; a header later than that could let a lease be taken over early by the difference.
 *
 * <p><b>Table</b>: a partition key of type string and no sort key, named by the
 * {@link TableLayout} ({@link TableLayout#LIBRARY} by default, {@link TableLayout#POWERTOOLS} for
 * a Powertools table); {@link #createTableIfMissing()} creates it, for tests and development.
 *
 * <p><b>Failures</b>: a server that cannot be reached or does not answer in time, or answers that
 * it is overloaded or failing (HTTP 5xx, throttling, after the client's own retries), is thrown as
 * {@link StoreUnavailableException}, which lease mode refuses the call with by default
 * ({@link dev.idempotency.StoreUnavailablePolicy}); a missing table as
 * {@link MissingTableException}; any other refusal as {@link IdempotencyStoreException}; each with
 * the SDK's exception as its cause. Configure the client's timeouts ({@code apiCallTimeout}) as
 * short as a call may wait for the store.
 *
 * <p>Ids: {@code prefix#<scope length>:<scope>:<id>}, one item per record.
 *
 * <p>Immutable and thread-safe; share one store, and one client, across threads. The store does
 * not close the client.
 */
public final class DynamoDbLeasingStore implements LeaseOnlyStore {

    /** What a {@link StoreUnavailableException} of this store suggests waiting: 1 second. */
    public static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbLeasingStore.class);
    private static final Map<DynamoDbClient, ServerClock> CLOCKS = Collections.synchronizedMap(new WeakHashMap<>());
    private static final int CLAIM_ROUNDS = 20;
    /** DynamoDB's largest item, 400 KB, names and values counted. */
    static final int MAX_ITEM_BYTES = 400 * 1024;
    private static final int ITEM_OVERHEAD = 2048;
    private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z0-9_.-]{3,255}");

    private static final String FP = "fingerprint";
    private static final String OWNER = "owner";
    private static final String ATTEMPTS = "attempts";
    private static final String VERSION = "version";
    private static final String STATUS = "status";
    private static final String CREATED = "created_ms";
    private static final String COMPLETED = "completed_ms";
    private static final String EXPIRES = "expires_ms";
    private static final String CODEC = "codec";
    private static final String RESULT = "result";
    private static final String POINT_CODEC = "point_codec";
    private static final String POINT_STATE = "point_state";

    /** The fence of every primitive but the claim: the record in progress, held by the owner token, not expired. */
    static final String FENCE = "#owner = :owner AND #status = :inProgress AND #expires > :earliest";

    private final DynamoDbClient client;
    private final String table;
    private final TableLayout layout;
    private final String prefix;
    private final ServerClock serverClock;
    private final LeaseClock time;

    private DynamoDbLeasingStore(Builder b) {
        this.client = b.client;
        this.table = b.table;
        this.layout = b.layout;
        this.prefix = b.prefix;
        this.serverClock = CLOCKS.computeIfAbsent(client, c -> new ServerClock(b.serverDateLag));
        this.time = b.clock != null ? b.clock : this::serverNow;
    }

    /**
     * For the tests' broken variants, clients that forward to {@code server}: {@code forwarding}
     * shares the estimate of the server's clock that stores over {@code server} have.
     */
    static void shareClock(DynamoDbClient forwarding, DynamoDbClient server) {
        synchronized (CLOCKS) {
            CLOCKS.put(forwarding, CLOCKS.computeIfAbsent(server, c -> new ServerClock(Builder.DEFAULT_LAG)));
        }
    }

    /**
     * @param client the DynamoDB client; the store does not close it
     * @param table the table's name: 3 to 255 letters, digits, {@code _}, {@code -} or {@code .}, as
     *     DynamoDB allows
     * @return a builder with the {@link TableLayout#LIBRARY} layout, the id prefix {@code idempotency}
     * @throws IllegalArgumentException if the table's name is not one DynamoDB allows
     */
    public static Builder builder(DynamoDbClient client, String table) {
        Objects.requireNonNull(table, "table");
        if (!TABLE_NAME.matcher(table).matches()) {
            throw new IllegalArgumentException("the table's name must be 3 to 255 letters, digits, '_', '-' or '.',"
                    + " as DynamoDB allows, was '" + table + "'");
        }
        return new Builder(Objects.requireNonNull(client, "client"), table);
    }

    // ---- the primitives -------------------------------------------------------------------------

    @Override
    public LeaseClaim claimLease(NoTransaction tx, LeaseRequest request) {
        IdempotencyKey key = request.key();
        for (int round = 0; round < CLAIM_ROUNDS; round++) {
            ServerClock.Window now = time.now(key, "claim");
            long leaseUntil = now.latest() + request.lease().toMillis();
            long expires = now.latest() + request.retention().toMillis();
            Map<String, AttributeValue> item = new LinkedHashMap<>(id(key));
            item.put(STATUS, s(layout.inProgressStatus()));
            item.put(FP, s(request.fingerprint().value()));
            item.put(OWNER, s(request.ownerToken()));
            item.put(ATTEMPTS, n(1));
            item.put(VERSION, n(1));
            item.put(layout.leaseUntilAttribute(), n(leaseUntil));
            item.put(CREATED, n(now.latest()));
            item.put(EXPIRES, n(expires));
            item.put(layout.ttlAttribute(), n(ttlSeconds(expires)));
            Expression free = new Expression("attribute_not_exists(#pk) OR #expires <= :earliest").value(":earliest", n(now.earliest()));
            Map<String, AttributeValue> found;
            try {
                call(key, "claim", () -> client.putItem(r -> r.tableName(table).item(item).conditionExpression(free.text())
                        .expressionAttributeNames(free.names()).expressionAttributeValues(free.values())
                        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)));
                return new LeaseClaim.Acquired(1, Instant.ofEpochMilli(now.latest()), Instant.ofEpochMilli(leaseUntil), null);
            } catch (ConditionalCheckFailedException alreadyThere) {
                found = alreadyThere.hasItem() && !alreadyThere.item().isEmpty() ? alreadyThere.item() : read(key);
            }
            if (found == null || number(found, EXPIRES) <= now.earliest()) {
                continue; // deleted, or expired, since the put: try again
            }
            if (!layout.inProgressStatus().equals(found.get(STATUS).s())) {
                return new LeaseClaim.Existing(record(key, found));
            }
            Fingerprint heldFor = Fingerprint.fromValue(found.get(FP).s());
            long heldUntil = number(found, layout.leaseUntilAttribute());
            int attempts = (int) number(found, ATTEMPTS);
            if (!heldFor.equals(request.fingerprint()) || heldUntil > now.earliest()) {
                return new LeaseClaim.Held(heldFor, Instant.ofEpochMilli(heldUntil), attempts, Instant.ofEpochMilli(now.latest()),
                        Instant.ofEpochMilli(number(found, EXPIRES)));
            }
            Optional<Map<String, AttributeValue>> taken = takeOver(key, request, found, now, leaseUntil, expires);
            if (taken.isPresent()) {
                Map<String, AttributeValue> t = taken.get();
                return new LeaseClaim.Acquired(attempts + 1, Instant.ofEpochMilli(now.latest()), Instant.ofEpochMilli(leaseUntil), point(t));
            }
        }
        throw new IdempotencyStoreException(key, "the claim of " + key + " in DynamoDB table " + table + " lost " + CLAIM_ROUNDS
                + " races in a row to other writers of the key", null);
    }

    /** Takes over the record as read, if no one wrote it since: its version and owner unchanged. */
    private Optional<Map<String, AttributeValue>> takeOver(IdempotencyKey key, LeaseRequest request, Map<String, AttributeValue> found,
                                                           ServerClock.Window now, long leaseUntil, long expires) {
        Expression e = new Expression("SET #owner = :owner, #attempts = :attempts, #lease = :lease, #expires = :expires, #ttl = :ttl,"
                + " #version = :next", "#version = :version AND #owner = :previous")
                .value(":owner", s(request.ownerToken())).value(":attempts", n(number(found, ATTEMPTS) + 1)).value(":lease", n(leaseUntil))
                .value(":expires", n(expires)).value(":ttl", n(ttlSeconds(expires))).value(":next", n(number(found, VERSION) + 1))
                .value(":version", found.get(VERSION)).value(":previous", found.get(OWNER));
        try {
            return Optional.of(call(key, "take-over", () -> client.updateItem(r -> r.tableName(table).key(id(key))
                    .updateExpression(e.update()).conditionExpression(e.text()).expressionAttributeNames(e.names())
                    .expressionAttributeValues(e.values()).returnValues(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException lostTheRace) {
            return Optional.empty();
        }
    }

    @Override
    public Optional<Instant> extendLease(NoTransaction tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return fenced(key, ownerToken, "lease extension", now -> {
            long until = now.latest() + lease.toMillis();
            return new Fenced("SET #lease = :lease", until).value(":lease", n(until));
        });
    }

    @Override
    public boolean checkpoint(NoTransaction tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        refuseOverItemLimit(key, "recovery point (the prepare phase's value)", point.codec(), point.state());
        return fenced(key, ownerToken, "checkpoint", now -> point.state() == null
                ? new Fenced("SET #pointCodec = :pointCodec REMOVE #pointState", 0).value(":pointCodec", s(point.codec()))
                : new Fenced("SET #pointCodec = :pointCodec, #pointState = :pointState", 0).value(":pointCodec", s(point.codec()))
                        .value(":pointState", b(point.state()))).isPresent();
    }

    @Override
    public Optional<Instant> completeLeased(NoTransaction tx, String ownerToken, LeasedCompletion completion) {
        refuseOverItemLimit(completion.key(), "result", completion.codec(), completion.result());
        return fenced(completion.key(), ownerToken, "completion", now -> {
            long expires = now.latest() + completion.retention().toMillis();
            String result = completion.result() == null ? "" : ", #result = :result";
            Fenced f = new Fenced("SET #status = :status, #codec = :codec, #completed = :completed, #expires = :expires, #ttl = :ttl"
                    + result + " REMOVE #owner, #lease, #pointCodec, #pointState" + (completion.result() == null ? ", #result" : ""),
                    now.latest())
                    .value(":status", s(completion.status().name())).value(":codec", s(completion.codec()))
                    .value(":completed", n(now.latest())).value(":expires", n(expires)).value(":ttl", n(ttlSeconds(expires)));
            return completion.result() == null ? f : f.value(":result", b(completion.result()));
        });
    }

    @Override
    public boolean releaseLease(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        // The lease ends for every node at once, whatever its estimate of the server's clock.
        return fenced(key, ownerToken, "release", now -> new Fenced("SET #lease = :lease", 0).value(":lease", n(0))).isPresent();
    }

    @Override
    public boolean withdrawClaim(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        ServerClock.Window now = time.now(key, "withdrawal");
        Expression e = new Expression(FENCE).value(":owner", s(ownerToken)).value(":inProgress", s(layout.inProgressStatus()))
                .value(":earliest", n(now.earliest()));
        try {
            call(key, "withdrawal", () -> client.deleteItem(r -> r.tableName(table).key(id(key)).conditionExpression(e.text())
                    .expressionAttributeNames(e.names()).expressionAttributeValues(e.values())));
            return true;
        } catch (ConditionalCheckFailedException notTheHolder) {
            return false;
        }
    }

    /**
     * DynamoDB refuses an item over 400 KB (names and values counted) with a validation error: the
     * record's size with {@code value} (a result, or a recovery point, which the item holds until the
     * completion removes it), bounded from above by the value, the id twice and 2,048 bytes for the
     * other attributes (the fingerprint, the codec's name, the numbers and every name), is checked
     * before anything is sent, so that the engine records the operation as failed instead (a result)
     * or withdraws the claim (a recovery point).
     */
    private void refuseOverItemLimit(IdempotencyKey key, String what, String codec, byte[] value) {
        if (value == null) {
            return;
        }
        long item = ITEM_OVERHEAD + 2L * idOf(key).getBytes(StandardCharsets.UTF_8).length + codec.getBytes(StandardCharsets.UTF_8).length
                + value.length;
        if (item > MAX_ITEM_BYTES) {
            throw new ResultTooLargeException(key, "the encoded " + what + " is " + value.length + " bytes, within the policy's"
                    + " limit, but the item that records it would be up to " + item + " bytes, over DynamoDB's item size limit of "
                    + MAX_ITEM_BYTES + " bytes", "nothing was sent; lower KeyPolicy.maxResultBytes below it, or keep the payload"
                    + " elsewhere and record its id", value.length, MAX_ITEM_BYTES, null);
        }
    }

    /** One fenced update: the update's text, what it answers with, and its values. */
    private final class Fenced extends Expression {
        final long answer;

        Fenced(String update, long answer) {
            super(update, FENCE);
            this.answer = answer;
        }

        @Override
        Fenced value(String name, AttributeValue v) {
            super.value(name, v);
            return this;
        }
    }

    /** Runs a fenced update, adding the version count: its answer if the token held the record, empty if not. */
    private Optional<Instant> fenced(IdempotencyKey key, String ownerToken, String what,
                                     java.util.function.Function<ServerClock.Window, Fenced> update) {
        ServerClock.Window now = time.now(key, what);
        Fenced f = update.apply(now);
        String text = f.update();
        int remove = text.indexOf(" REMOVE ");
        String counted = remove < 0 ? text + ", #version = #version + :one" : text.substring(0, remove) + ", #version = #version + :one"
                + text.substring(remove);
        Expression e = new Expression(counted, f.text()).values(f).value(":one", n(1)).value(":owner", s(ownerToken))
                .value(":inProgress", s(layout.inProgressStatus())).value(":earliest", n(now.earliest()));
        try {
            call(key, what, () -> client.updateItem(r -> r.tableName(table).key(id(key)).updateExpression(e.update())
                    .conditionExpression(e.text()).expressionAttributeNames(e.names()).expressionAttributeValues(e.values())));
            return Optional.of(Instant.ofEpochMilli(f.answer));
        } catch (ConditionalCheckFailedException notTheHolder) {
            return Optional.empty();
        }
    }

    // ---- reading --------------------------------------------------------------------------------

    /** The key's item by a consistent read, or {@code null}. */
    private Map<String, AttributeValue> read(IdempotencyKey key) {
        Map<String, AttributeValue> item = call(key, "read", () -> client.getItem(r -> r.tableName(table).key(id(key)).consistentRead(true)))
                .item();
        return item == null || item.isEmpty() ? null : item;
    }

    private StoredRecord record(IdempotencyKey key, Map<String, AttributeValue> item) {
        RecordStatus status = RecordStatus.valueOf(item.get(STATUS).s());
        AttributeValue result = item.get(RESULT);
        return new StoredRecord(key, Fingerprint.fromValue(item.get(FP).s()), status, item.get(CODEC).s(),
                result == null ? null : result.b().asByteArray(), Instant.ofEpochMilli(number(item, CREATED)),
                Instant.ofEpochMilli(number(item, COMPLETED)), Instant.ofEpochMilli(number(item, EXPIRES)));
    }

    private static RecoveryPoint point(Map<String, AttributeValue> item) {
        AttributeValue codec = item.get(POINT_CODEC);
        if (codec == null) {
            return null;
        }
        AttributeValue state = item.get(POINT_STATE);
        return new RecoveryPoint(codec.s(), state == null ? null : state.b().asByteArray());
    }

    // ---- the clock ------------------------------------------------------------------------------

    /** Where the store's times come from: the server's estimated clock, or (in the tests' broken variant) another. */
    interface LeaseClock {
        /** @param what the primitive that asks, for the messages of a failed probe */
        ServerClock.Window now(IdempotencyKey key, String what);
    }

    private ServerClock.Window serverNow(IdempotencyKey key, String what) {
        if (!serverClock.known()) {
            probe(key, "clock probe before the " + what);
        }
        return serverClock.now();
    }

    /**
     * One request whose only purpose is its {@code Date}: a consistent read of an item that is never
     * written. A missing table answers with a {@code Date} too; the primitive that follows reports it.
     */
    private void probe(IdempotencyKey key, String what) {
        try {
            call(key, what, () -> client.getItem(r -> r.tableName(table)
                    .key(Map.of(layout.partitionKey(), s(prefix + "#clock-probe"))).consistentRead(true)));
        } catch (MissingTableException answeredAnyway) {
            // its Date was taken in
        }
    }

    /**
     * @return how wide the estimate of the server's clock is now: how much later than the server's
     *     clock alone a lease or a record may be judged to have ended
     */
    public Duration clockUncertainty() {
        return serverClock.known() ? serverClock.uncertainty() : Duration.ofSeconds(1);
    }

    // ---- calls ----------------------------------------------------------------------------------

    /** Calls the server, takes its {@code Date} into the clock, and turns its failures into the library's. */
    private <R extends DynamoDbResponse> R call(IdempotencyKey key, String what, Supplier<R> request) {
        long sent = ServerClock.localNanos();
        try {
            R response = request.get();
            observe(sent, response.sdkHttpResponse());
            return response;
        } catch (AwsServiceException e) {
            if (e.awsErrorDetails() != null) {
                observe(sent, e.awsErrorDetails().sdkHttpResponse());
            }
            if (e instanceof ConditionalCheckFailedException) {
                throw e;
            }
            if (e instanceof ResourceNotFoundException) {
                throw new MissingTableException(key, table, "DynamoDbLeasingStore.createTableIfMissing(), or a table whose partition key is the"
                        + " string '" + layout.partitionKey() + "'", e);
            }
            if (e.statusCode() >= 500 || e.isThrottlingException()) {
                throw unavailable(key, what, e);
            }
            throw new IdempotencyStoreException(key, "DynamoDB table " + table + " refused the " + what + ": " + e.getMessage(), e);
        } catch (SdkClientException e) {
            throw unavailable(key, what, e);
        }
    }

    private void observe(long sent, SdkHttpResponse response) {
        if (response != null) {
            serverClock.observe(sent, ServerClock.localNanos(), response.firstMatchingHeader("Date"));
        }
    }

    private StoreUnavailableException unavailable(IdempotencyKey key, String what, SdkException e) {
        return new StoreUnavailableException(key, "DynamoDB (table " + table + ") could not be reached for the " + what + ": "
                + e.getMessage(), e, RETRY_AFTER);
    }

    // ---- the table ------------------------------------------------------------------------------

    /**
     * Creates the table if it does not exist, for tests and development: the layout's partition key,
     * on-demand billing, and the time to live on the layout's attribute where the server has it
     * (dynalite has not: the store judges expiry itself, so it stays correct, but nothing deletes
     * expired items). Waits until the table is active. Production tables belong in the
     * infrastructure's own definitions.
     *
     * @throws IdempotencyStoreException if the table cannot be created
     */
    public void createTableIfMissing() {
        try {
            client.createTable(r -> r.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(AttributeDefinition.builder().attributeName(layout.partitionKey())
                            .attributeType(ScalarAttributeType.S).build())
                    .keySchema(KeySchemaElement.builder().attributeName(layout.partitionKey()).keyType(KeyType.HASH).build()));
        } catch (ResourceInUseException exists) {
            return;
        } catch (SdkException e) {
            throw new IdempotencyStoreException(null, "could not create DynamoDB table " + table + ": " + e.getMessage(), e);
        }
        try {
            for (int i = 0; i < 600 && client.describeTable(r -> r.tableName(table)).table().tableStatus() != TableStatus.ACTIVE; i++) {
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdempotencyStoreException(null, "interrupted while waiting for DynamoDB table " + table + " to become active", e);
        }
        try {
            client.updateTimeToLive(r -> r.tableName(table).timeToLiveSpecification(t -> t.enabled(true).attributeName(layout.ttlAttribute())));
        } catch (SdkException e) {
            LOG.warn("DynamoDB table {} was created, but its time to live could not be enabled on '{}' ({}): expired records are judged"
                    + " expired on every read, but never deleted", table, layout.ttlAttribute(), e.getMessage());
        }
    }

    // ---- attribute values -----------------------------------------------------------------------

    private Map<String, AttributeValue> id(IdempotencyKey key) {
        return Map.of(layout.partitionKey(), s(idOf(key)));
    }

    private String idOf(IdempotencyKey key) {
        return prefix + "#" + key.scope().length() + ":" + key.scope() + ":" + key.id();
    }

    private static long ttlSeconds(long epochMillis) {
        return Math.floorDiv(epochMillis + 999, 1000);
    }

    private static long number(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? 0 : Long.parseLong(v.n());
    }

    private static AttributeValue s(String value) {
        return AttributeValue.fromS(value);
    }

    private static AttributeValue n(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }

    private static AttributeValue b(byte[] value) {
        return AttributeValue.fromB(SdkBytes.fromByteArray(value));
    }

    /**
     * An update and a condition with their placeholders: names ({@code #name}) map to the layout's
     * attribute names, and only those used are sent, as DynamoDB refuses unused ones.
     */
    private class Expression {
        private final String update;
        private final String condition;
        private final Map<String, AttributeValue> values = new HashMap<>();

        Expression(String condition) {
            this("", condition);
        }

        Expression(String update, String condition) {
            this.update = update;
            this.condition = condition;
        }

        Expression value(String name, AttributeValue v) {
            values.put(name, v);
            return this;
        }

        Expression values(Expression other) {
            values.putAll(other.values);
            return this;
        }

        String update() {
            return update;
        }

        String text() {
            return condition;
        }

        Map<String, String> names() {
            Map<String, String> all = Map.ofEntries(Map.entry("#pk", layout.partitionKey()), Map.entry("#status", STATUS),
                    Map.entry("#owner", OWNER), Map.entry("#attempts", ATTEMPTS), Map.entry("#version", VERSION),
                    Map.entry("#lease", layout.leaseUntilAttribute()), Map.entry("#expires", EXPIRES), Map.entry("#ttl", layout.ttlAttribute()),
                    Map.entry("#codec", CODEC), Map.entry("#result", RESULT), Map.entry("#completed", COMPLETED),
                    Map.entry("#pointCodec", POINT_CODEC), Map.entry("#pointState", POINT_STATE));
            Map<String, String> used = new HashMap<>();
            all.forEach((placeholder, name) -> {
                if (Pattern.compile(Pattern.quote(placeholder) + "\\b").matcher(update + " " + condition).find()) {
                    used.put(placeholder, name);
                }
            });
            return used;
        }

        Map<String, AttributeValue> values() {
            Map<String, AttributeValue> used = new HashMap<>();
            values.forEach((placeholder, v) -> {
                if (Pattern.compile(Pattern.quote(placeholder) + "\\b").matcher(update + " " + condition).find()) {
                    used.put(placeholder, v);
                }
            });
            return used;
        }
    }

    @Override
    public String toString() {
        return "DynamoDbLeasingStore[table " + table + ", " + layout + " layout, prefix " + prefix + ", " + serverClock + "]";
    }

    /** Builds a {@link DynamoDbLeasingStore}. Not thread-safe; the store it builds is. */
    public static final class Builder {
        private final DynamoDbClient client;
        private final String table;
        private TableLayout layout = TableLayout.LIBRARY;
        private String prefix = "idempotency";
        static final Duration DEFAULT_LAG = Duration.ofMillis(10);
        private Duration serverDateLag = DEFAULT_LAG;
        private Duration calibration = Duration.ofSeconds(3);
        private LeaseClock clock;

        private Builder(DynamoDbClient client, String table) {
            this.client = client;
            this.table = table;
        }

        /**
         * @param layout the names of the table's key, attributes and statuses
         * @return this builder
         */
        public Builder layout(TableLayout layout) {
            this.layout = Objects.requireNonNull(layout, "layout");
            return this;
        }

        /**
         * @param prefix what every id of the store starts with, before a {@code #}; not empty
         * @return this builder
         */
        public Builder keyPrefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.isEmpty()) {
                throw new IllegalArgumentException("the key prefix must not be empty");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * How late the server's {@code Date} header may be behind its own clock: a server that
         * formats the header once a second and serves it from a cache (dynalite on Node.js does) can
         * send the last second's for a few milliseconds after the next began. Default 10 ms. The
         * estimate of the server's clock is one per client: the first store built over a client
         * fixes it.
         *
         * @param lag zero or positive
         * @return this builder
         */
        public Builder serverDateLag(Duration lag) {
            Objects.requireNonNull(lag, "lag");
            if (lag.isNegative()) {
                throw new IllegalArgumentException("the server's Date lag must not be negative, was " + lag);
            }
            this.serverDateLag = lag;
            return this;
        }

        /**
         * How long {@link #build()} may spend calibrating the estimate of the server's clock, with
         * probes (consistent reads of one item) timed to the server's second boundaries: down to
         * the round trip plus {@link #serverDateLag}, or as far as the time allows. Default 3
         * seconds, and once per client (a later store over the same client finds it done); zero skips it (the estimate then narrows only as calls happen to fall near a
         * second boundary, and leases may be judged ended up to a second late). A server that cannot
         * be reached ends the calibration quietly.
         *
         * @param budget zero or positive
         * @return this builder
         */
        public Builder clockCalibration(Duration budget) {
            Objects.requireNonNull(budget, "budget");
            if (budget.isNegative()) {
                throw new IllegalArgumentException("the calibration budget must not be negative, was " + budget);
            }
            this.calibration = budget;
            return this;
        }

        /** For the tests' broken variant: times from {@code clock} instead of the server's estimated clock. */
        Builder leaseClock(LeaseClock clock) {
            this.clock = clock;
            return this;
        }

        /** @return the store, its estimate of the server's clock calibrated within the budget */
        public DynamoDbLeasingStore build() {
            DynamoDbLeasingStore store = new DynamoDbLeasingStore(this);
            if (!calibration.isZero() && !store.serverClock.calibrated()) {
                try {
                    IdempotencyKey probe = IdempotencyKey.of("clock", "probe");
                    store.serverClock.calibrate(() -> store.probe(probe, "clock probe"), serverDateLag.plusMillis(5), calibration);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (IdempotencyStoreException e) {
                    LOG.warn("the estimate of DynamoDB's clock could not be calibrated: {}", e.getMessage());
                }
            }
            return store;
        }
    }
}
