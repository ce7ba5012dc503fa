package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.KeyPolicy;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.StoreUnavailablePolicy;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The settings of the auto-configured engine, under {@code idempotency.*}:
 *
 * <pre>
 * idempotency.store=jdbc                      # or redis or dynamodb; unset: see {@link #getStore()}
 * idempotency.table=idempotency_record        # or schema.table; on DynamoDB, the table's name
 * idempotency.retention=24h                   # how long a completed key answers retries
 * idempotency.lock-timeout=5s                 # how long to wait for a concurrent holder of the key
 * idempotency.key-format=any                  # or uuid: key ids must be UUIDs of version 4 or 7
 * idempotency.max-result-size=1MB             # the largest encoded result recorded, 0B to 16MB
 * idempotency.create-table=false              # true: create the table at startup if it is missing
 * idempotency.when-unavailable=refuse         # or run-without-deduplication (lease mode's claim)
 * idempotency.metrics.enabled=true            # with Micrometer: publish metrics
 * idempotency.metrics.scope-tag=false         # true: tag metrics with the key's scope
 * idempotency.redis.uri=redis://host:6379     # the Redis store's server, when no RedisClient bean is defined
 * idempotency.redis.key-prefix=idempotency    # what every Redis key of the store starts with
 * idempotency.redis.wait-replicas=0           # 1 or more: WAIT for that many replicas after each write
 * idempotency.redis.wait-timeout=1s           # how long to WAIT for them
 * idempotency.dynamodb.region=eu-west-1       # the DynamoDB store's region, when no DynamoDbClient bean is defined
 * idempotency.dynamodb.endpoint=http://host:8000  # a server other than AWS's, likewise
 * idempotency.dynamodb.layout=library         # or powertools: the attribute names of Powertools' table
 * idempotency.dynamodb.key-prefix=idempotency # what every id of the store starts with, before a #
 * idempotency.dynamodb.clock-calibration=3s   # how long startup may calibrate the server's clock, 0s to skip
 * </pre>
 *
 * Values are checked when the engine is built: a bad one fails the application's startup with an
 * {@link InvalidIdempotencyPropertyException}, which Boot's failure analysis reports with the
 * property, the value as written and the reason. Mutable, as Spring binds it; not for use across threads while it is bound.
 */
@ConfigurationProperties("idempotency")
public class IdempotencyProperties {

    /** The largest {@code idempotency.max-result-size}: the limit of {@link KeyPolicy.Builder#maxResultBytes}. */
    private static final DataSize MAX_RESULT_SIZE = DataSize.ofMegabytes(16);

    /** The store of the records: jdbc (the application's DataSource), redis or dynamodb (lease mode only); unset, chosen by the beans present. */
    private @Nullable String store;

    /** The table of the records: a plain identifier, or schema.table; on the DynamoDB store, the table's name. */
    private String table = "idempotency_record";

    /** How long a completed key answers retries; after it, the key counts as new. */
    private Duration retention = KeyPolicy.DEFAULT_RETENTION;

    /** How long an attempt waits for a concurrent transaction holding the same key, before InProgress. */
    private Duration lockTimeout = KeyPolicy.DEFAULT_LOCK_TIMEOUT;

    /** What a key id must look like: any (printable ASCII without spaces) or uuid (a UUID of version 4 or 7). */
    private KeyPolicy.IdFormat keyFormat = KeyPolicy.IdFormat.ANY;

    /** The largest encoded result that is recorded; a larger one is refused before anything is written. */
    private DataSize maxResultSize = DataSize.ofBytes(KeyPolicy.DEFAULT_MAX_RESULT_BYTES);

    /** Whether to create the table at startup if it is missing: with the DDL of the detected database, or the DynamoDB store's table. */
    private boolean createTable;

    private final Metrics metrics = new Metrics();

    private final Recovery recovery = new Recovery();

    /** What lease mode does when its claim finds the store unreachable: refuse the call, or run it without deduplication. */
    private StoreUnavailablePolicy whenUnavailable = StoreUnavailablePolicy.REFUSE;

    private final Redis redis = new Redis();

    private final DynamoDb dynamodb = new DynamoDb();

    /** Creates the defaults. */
    public IdempotencyProperties() {
    }

    /**
     * Which store holds the records. {@code jdbc}: the JDBC store on the application's one
     * {@code DataSource}, every mode. {@code redis}, {@code dynamodb}: the Redis or the DynamoDB
     * store, lease mode only (no transactional beans). Unset: the JDBC store if there is one
     * {@code DataSource}; otherwise the store whose client bean there is (a Lettuce
     * {@code RedisClient}, an AWS SDK {@code DynamoDbClient}); otherwise none.
     *
     * @return {@code jdbc}, {@code redis}, {@code dynamodb}, or {@code null} when unset
     */
    public @Nullable String getStore() {
        return store;
    }

    /** @param store {@code jdbc}, {@code redis} or {@code dynamodb} */
    public void setStore(String store) {
        this.store = store;
    }

    /** @return the Redis store's settings */
    public Redis getRedis() {
        return redis;
    }

    /** @return the DynamoDB store's settings */
    public DynamoDb getDynamodb() {
        return dynamodb;
    }

    /**
     * What lease mode does when its claim finds the store unreachable: {@code refuse} (the default)
     * throws {@code StoreUnavailableException}, which the HTTP layer answers with 503 and
     * {@code Retry-After}; {@code run-without-deduplication} runs the call without a record and tells
     * every listener (and the metrics).
     *
     * @return the policy
     */
    public StoreUnavailablePolicy getWhenUnavailable() {
        return whenUnavailable;
    }

    /** @param whenUnavailable lease mode's policy when the store cannot be reached */
    public void setWhenUnavailable(StoreUnavailablePolicy whenUnavailable) {
        this.whenUnavailable = whenUnavailable;
    }

    /** @return the table name */
    public String getTable() {
        return table;
    }

    /** @param table the table name, or {@code schema.table} */
    public void setTable(String table) {
        this.table = table;
    }

    /** @return the retention */
    public Duration getRetention() {
        return retention;
    }

    /** @param retention how long a completed key answers retries */
    public void setRetention(Duration retention) {
        this.retention = retention;
    }

    /** @return the lock timeout */
    public Duration getLockTimeout() {
        return lockTimeout;
    }

    /** @param lockTimeout how long to wait for a concurrent holder of the key */
    public void setLockTimeout(Duration lockTimeout) {
        this.lockTimeout = lockTimeout;
    }

    /** @return what a key id must look like */
    public KeyPolicy.IdFormat getKeyFormat() {
        return keyFormat;
    }

    /** @param keyFormat what a key id must look like: {@code any} or {@code uuid} */
    public void setKeyFormat(KeyPolicy.IdFormat keyFormat) {
        this.keyFormat = keyFormat;
    }

    /** @return the result size limit */
    public DataSize getMaxResultSize() {
        return maxResultSize;
    }

    /** @param maxResultSize the largest encoded result recorded, {@code 0B} to {@code 16MB} */
    public void setMaxResultSize(DataSize maxResultSize) {
        this.maxResultSize = maxResultSize;
    }

    /** @return whether the table is created at startup */
    public boolean isCreateTable() {
        return createTable;
    }

    /** @param createTable whether to create the table at startup if it is missing */
    public void setCreateTable(boolean createTable) {
        this.createTable = createTable;
    }

    /** @return the recovery worker's settings */
    public Recovery getRecovery() {
        return recovery;
    }

    /** @return the metrics settings */
    public Metrics getMetrics() {
        return metrics;
    }

    /**
     * @return the key policy these properties describe
     * @throws InvalidIdempotencyPropertyException naming the property whose value the policy refuses
     */
    public KeyPolicy toKeyPolicy() {
        if (maxResultSize.isNegative() || maxResultSize.compareTo(MAX_RESULT_SIZE) > 0) { // too large for an int, too
            throw new InvalidIdempotencyPropertyException("idempotency.max-result-size", written(maxResultSize),
                    "must be between 0B and " + written(MAX_RESULT_SIZE) + " (" + MAX_RESULT_SIZE.toBytes() + " bytes)", null);
        }
        int bytes = (int) maxResultSize.toBytes();
        KeyPolicy.Builder policy = KeyPolicy.builder();
        set("idempotency.retention", retention, () -> policy.retention(retention));
        set("idempotency.lock-timeout", lockTimeout, () -> policy.lockTimeout(lockTimeout));
        set("idempotency.max-result-size", written(maxResultSize), () -> policy.maxResultBytes(bytes));
        policy.idFormat(keyFormat);
        return policy.build();
    }

    /** A size in its largest whole unit, as one would write it: {@code 100GB}, not {@code 107374182400B}. */
    private static String written(DataSize size) {
        String[] suffixes = { "B", "KB", "MB", "GB", "TB" }; // DataSize's units, each 1024 times the one before
        long value = size.toBytes();
        int unit = 0;
        while (value != 0 && value % 1024 == 0 && unit < suffixes.length - 1) {
            value /= 1024;
            unit++;
        }
        return value + suffixes[unit];
    }

    /**
     * @return a JDBC store on the configured table
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.table} if the name is not a plain
     *     identifier, or is a reserved word
     */
    public JdbcIdempotencyStore toStore() {
        JdbcIdempotencyStore.Builder store = JdbcIdempotencyStore.builder();
        set("idempotency.table", table, () -> store.table(table));
        return store.build();
    }

    /**
     * Refuses a setting with {@link InvalidIdempotencyPropertyException} naming {@code property} if
     * {@code setter} refuses it.
     *
     * @param property the property's name
     * @param value its value, for the message
     * @param setter applies it to the component it configures
     */
    static void set(String property, Object value, Runnable setter) {
        try {
            setter.run();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new InvalidIdempotencyPropertyException(property, String.valueOf(value), String.valueOf(e.getMessage()), e);
        }
    }

    /**
     * The recovery worker's settings, under {@code idempotency.recovery.*}: with
     * {@code idempotency.recovery.enabled=true} the application runs a {@link RecoveryWorker}
     * over every named {@code Phases} bean, from the context's start to its close.
     */
    public static class Recovery {

        /** Whether to run the recovery worker over the named Phases beans. */
        private boolean enabled;

        /** The pause between the worker's passes, and the longest backoff. */
        private Duration interval = Duration.ofSeconds(30);

        /** The attempts an operation may have in all, its client's included, before the worker gives it up. */
        private int maxAttempts = 5;

        /** Creates the defaults. */
        public Recovery() {
        }

        /** @return whether the recovery worker runs */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the recovery worker runs */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the pause between passes */
        public Duration getInterval() {
            return interval;
        }

        /** @param interval the pause between passes */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        /** @return the attempts before an operation is given up */
        public int getMaxAttempts() {
            return maxAttempts;
        }

        /** @param maxAttempts the attempts before an operation is given up */
        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        /**
         * @param builder the worker's builder
         * @param <C> the transaction type
         * @return the builder with these settings, each checked and named if refused
         */
        public <C> RecoveryWorker.Builder<C> applyTo(RecoveryWorker.Builder<C> builder) {
            set("idempotency.recovery.interval", interval, () -> builder.interval(interval));
            set("idempotency.recovery.max-attempts", maxAttempts, () -> builder.maxAttempts(maxAttempts));
            return builder;
        }
    }

    /**
     * The Redis store's settings, under {@code idempotency.redis.*}, used with
     * {@code idempotency.store=redis} (or a {@code RedisClient} bean and no {@code DataSource}).
     */
    public static class Redis {

        /** The server, redis://host:port, when the application defines no Lettuce RedisClient bean. */
        private @Nullable String uri;

        /** What every Redis key of the store starts with, before a colon. */
        private String keyPrefix = "idempotency";

        /** After each write, WAIT until this many replicas have it; 0 does not wait. */
        private int waitReplicas;

        /** How long to WAIT for the replicas; fewer in time refuses the call. */
        private Duration waitTimeout = Duration.ofSeconds(1);

        /** Creates the defaults. */
        public Redis() {
        }

        /** @return the server's URI, or {@code null} */
        public @Nullable String getUri() {
            return uri;
        }

        /** @param uri the server, {@code redis://host:port} */
        public void setUri(String uri) {
            this.uri = uri;
        }

        /** @return the key prefix */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /** @param keyPrefix what every Redis key of the store starts with */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        /** @return how many replicas each write waits for */
        public int getWaitReplicas() {
            return waitReplicas;
        }

        /** @param waitReplicas how many replicas each write waits for, 0 for none */
        public void setWaitReplicas(int waitReplicas) {
            this.waitReplicas = waitReplicas;
        }

        /** @return how long to wait for the replicas */
        public Duration getWaitTimeout() {
            return waitTimeout;
        }

        /** @param waitTimeout how long to wait for the replicas */
        public void setWaitTimeout(Duration waitTimeout) {
            this.waitTimeout = waitTimeout;
        }
    }

    /**
     * The DynamoDB store's settings, under {@code idempotency.dynamodb.*}, used with
     * {@code idempotency.store=dynamodb} (or a {@code DynamoDbClient} bean and no {@code DataSource});
     * the table's name is {@code idempotency.table}.
     */
    public static class DynamoDb {

        /** The region of the client built when the application defines no DynamoDbClient bean; unset, the SDK's own lookup. */
        private @Nullable String region;

        /** A server other than AWS's (http://host:port), for the client built when the application defines no DynamoDbClient bean. */
        private @Nullable String endpoint;

        /** The names of the table's key and attributes: library (the store's own), or powertools (AWS Lambda Powertools' table). */
        private String layout = "library";

        /** What every id of the store starts with, before a #. */
        private String keyPrefix = "idempotency";

        /** How long the startup may spend calibrating the estimate of the server's clock; 0s skips it. */
        private Duration clockCalibration = Duration.ofSeconds(3);

        /** Creates the defaults. */
        public DynamoDb() {
        }

        /** @return the region, or {@code null} for the SDK's lookup */
        public @Nullable String getRegion() {
            return region;
        }

        /** @param region the region, such as {@code eu-west-1} */
        public void setRegion(String region) {
            this.region = region;
        }

        /** @return the endpoint, or {@code null} for AWS's */
        public @Nullable String getEndpoint() {
            return endpoint;
        }

        /** @param endpoint a server other than AWS's, {@code http://host:port} */
        public void setEndpoint(String endpoint) {
            this.endpoint = endpoint;
        }

        /**
         * A string, not the store's {@code TableLayout}, so that these properties bind without the
         * DynamoDB store on the class path.
         *
         * @return the table's layout, {@code library} or {@code powertools}
         */
        public String getLayout() {
            return layout;
        }

        /** @param layout {@code library} or {@code powertools} */
        public void setLayout(String layout) {
            this.layout = layout;
        }

        /** @return the id prefix */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /** @param keyPrefix what every id of the store starts with, before a {@code #} */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        /** @return how long the startup may calibrate the server's clock */
        public Duration getClockCalibration() {
            return clockCalibration;
        }

        /** @param clockCalibration how long the startup may calibrate the server's clock, zero to skip */
        public void setClockCalibration(Duration clockCalibration) {
            this.clockCalibration = clockCalibration;
        }
    }

    /** The metrics settings, under {@code idempotency.metrics.*}. */
    public static class Metrics {

        /** Whether to publish metrics when Micrometer and a MeterRegistry are present. */
        private boolean enabled = true;

        /**
         * Whether to tag metrics with the key's scope. Off by default: scopes are often one per
         * tenant, and a tag per tenant can multiply the number of time series without bound.
         */
        private boolean scopeTag;

        /** Creates the defaults. */
        public Metrics() {
        }

        /** @return whether metrics are published */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether to publish metrics */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return whether metrics carry the key's scope */
        public boolean isScopeTag() {
            return scopeTag;
        }

        /** @param scopeTag whether to tag metrics with the key's scope */
        public void setScopeTag(boolean scopeTag) {
            this.scopeTag = scopeTag;
        }
    }
}
