package dev.idempotency.redis;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The Redis store of lease mode ({@link LeaseOnlyStore}): every primitive is one Lua script that the
 * server runs atomically, so that no two claims of a key can both find it free, and every time is
 * the server's own clock ({@code TIME}), never the application's. Works on one server and on a Redis
 * Cluster: each record is a single Redis hash, so its data lives in one hash slot.
 *
 * <ul>
 *   <li><b>claim</b>: a key that has no record, or only an expired one, is taken with the request's
 *       owner token as attempt 1, the lease ending at the server's now plus the lease; a record in
 *       progress whose lease has ended (and whose fingerprint is the request's) is taken over,
 *       counting one more attempt and keeping its recovery point; a live lease, or another
 *       fingerprint, is {@code Held}; a completed or failed record is {@code Existing}.</li>
 *   <li><b>extend, checkpoint, complete, release</b>: each changes the record only while the owner
 *       token still holds it, in the same script that checks it.</li>
 *   <li><b>retention</b>: the key expires on the server ({@code PEXPIREAT}) at the record's expiry:
 *       the claim's now plus the retention, then the completion's now plus the retention. A record
 *       past its expiry counts as absent even before the server deletes it.</li>
 * </ul>
 *
 * <p><b>Replication.</b> Redis replicates asynchronously: a write that the primary acknowledged can
 * be lost if the primary fails before a replica has it, and a replica promoted then knows nothing of
 * a claim or a result, so a retry runs the call again. {@link Builder#waitForReplicas(int, Duration)}
 * sends {@code WAIT} after each write that changed a record, and refuses with
 * {@link IdempotencyStoreException} if fewer replicas confirmed it in time (the write stands on the
 * primary). This narrows the window, but does not close it: {@code WAIT} does not make Redis strongly
 * consistent, a failover may still promote a replica that missed the write, and a primary that
 * restarts without persistence forgets everything.
 *
 * <p><b>Connection</b>: a Lettuce connection with the byte-array codec, for example
 * {@code RedisClient.create(uri).connect(ByteArrayCodec.INSTANCE)}, or
 * {@code RedisClusterClient.create(uris).connect(ByteArrayCodec.INSTANCE)}. The store does not close
 * it. A server that cannot be reached (a connection refused or lost, a command rejected while
 * disconnected, a reply that timed out) is thrown as {@link StoreUnavailableException}, which lease
 * mode refuses the call with by default ({@link dev.idempotency.StoreUnavailablePolicy}); an error
 * the server answered (a script refused, out of memory) as {@link IdempotencyStoreException}; both
 * with Lettuce's exception as their cause. Configure the client to fail fast while disconnected
 * ({@code ClientOptions.disconnectedBehavior(REJECT_COMMANDS)}) and with a short command timeout,
 * or a call waits for the reconnection first.
 *
 * <p>Keys: {@code prefix:<scope length>:<scope>:<id>}, one Redis key per record.
 *
 * <p>Immutable and thread-safe; share one store, and one connection, across threads.
 */
public final class RedisLeasingStore implements LeaseOnlyStore {

    /** What a {@link StoreUnavailableException} of this store suggests waiting: 1 second. */
    public static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final RedisNode node;
    private final String prefix;
    private final int replicas;
    private final Duration replicaTimeout;
    private final String claimDigest;
    private final String extendDigest;
    private final String checkpointDigest;
    private final String completeDigest;
    private final String releaseDigest;
    private final String withdrawDigest;

    private RedisLeasingStore(Builder b) {
        this.node = b.node;
        this.prefix = b.prefix;
        this.replicas = b.replicas;
        this.replicaTimeout = b.replicaTimeout;
        this.claimDigest = node.digest(LeaseScripts.CLAIM);
        this.extendDigest = node.digest(LeaseScripts.EXTEND);
        this.checkpointDigest = node.digest(LeaseScripts.CHECKPOINT);
        this.completeDigest = node.digest(LeaseScripts.COMPLETE);
        this.releaseDigest = node.digest(LeaseScripts.RELEASE);
        this.withdrawDigest = node.digest(LeaseScripts.WITHDRAW);
    }

    /**
     * @param connection a connection to one Redis server, with the byte-array codec
     * @return a builder with the key prefix {@code idempotency} and no wait for replicas
     */
    public static Builder builder(StatefulRedisConnection<byte[], byte[]> connection) {
        return new Builder(RedisNode.of(Objects.requireNonNull(connection, "connection")));
    }

    /**
     * @param connection a connection to a Redis Cluster, with the byte-array codec
     * @return a builder with the key prefix {@code idempotency} and no wait for replicas
     */
    public static Builder builder(StatefulRedisClusterConnection<byte[], byte[]> connection) {
        return new Builder(RedisNode.of(Objects.requireNonNull(connection, "connection")));
    }

    /** A builder over {@code node}: for the tests' broken variants, which rewrite the scripts on their way to the server. */
    static Builder builder(RedisNode node) {
        return new Builder(node);
    }

    @Override
    public LeaseClaim claimLease(NoTransaction tx, LeaseRequest request) {
        IdempotencyKey key = request.key();
        byte[] redisKey = redisKey(key);
        List<Object> r = run(key, "claim", LeaseScripts.CLAIM, claimDigest, redisKey, bytes(request.fingerprint().value()),
                bytes(request.ownerToken()), millis(request.lease()), millis(request.retention()));
        Instant now = instant(r.get(1));
        switch (text(r.get(0))) {
            case "A":
                RecoveryPoint point = r.get(4) == null ? null : new RecoveryPoint(text(r.get(4)), (byte[]) r.get(5));
                LeaseClaim.Acquired acquired = new LeaseClaim.Acquired((int) number(r.get(3)), now, instant(r.get(2)), point);
                replicated(key, redisKey, "claim");
                return acquired;
            case "H":
                return new LeaseClaim.Held(Fingerprint.fromValue(text(r.get(2))), instant(r.get(3)), (int) number(r.get(4)), now,
                        r.size() > 5 && r.get(5) != null ? instant(r.get(5)) : null);
            default:
                RecordStatus status = "C".equals(text(r.get(2))) ? RecordStatus.COMPLETED : RecordStatus.FAILED;
                return new LeaseClaim.Existing(new StoredRecord(key, Fingerprint.fromValue(text(r.get(3))), status, text(r.get(4)),
                        (byte[]) r.get(5), instant(r.get(6)), instant(r.get(7)), instant(r.get(8))));
        }
    }

    @Override
    public Optional<Instant> extendLease(NoTransaction tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return fenced(key, "lease extension", LeaseScripts.EXTEND, extendDigest, bytes(ownerToken), millis(lease)).map(RedisLeasingStore::instant);
    }

    @Override
    public boolean checkpoint(NoTransaction tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        return fenced(key, "checkpoint", LeaseScripts.CHECKPOINT, checkpointDigest, bytes(ownerToken), bytes(point.codec()),
                flag(point.state()), orEmpty(point.state())).isPresent();
    }

    @Override
    public Optional<Instant> completeLeased(NoTransaction tx, String ownerToken, LeasedCompletion completion) {
        byte[] status = bytes(completion.status() == RecordStatus.COMPLETED ? "C" : "F");
        return fenced(completion.key(), "completion", LeaseScripts.COMPLETE, completeDigest, bytes(ownerToken), status,
                bytes(completion.codec()), flag(completion.result()), orEmpty(completion.result()), millis(completion.retention()))
                .map(RedisLeasingStore::instant);
    }

    @Override
    public boolean releaseLease(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        return fenced(key, "release", LeaseScripts.RELEASE, releaseDigest, bytes(ownerToken)).isPresent();
    }

    @Override
    public boolean withdrawClaim(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        return fenced(key, "withdrawal", LeaseScripts.WITHDRAW, withdrawDigest, bytes(ownerToken)).isPresent();
    }

    /** Runs a fenced script: its one answer if the token held the record (then waits for replicas), empty if not. */
    private Optional<Object> fenced(IdempotencyKey key, String what, String script, String digest, byte[]... args) {
        byte[] redisKey = redisKey(key);
        List<Object> r = run(key, what, script, digest, redisKey, args);
        if (r.isEmpty()) {
            return Optional.empty();
        }
        replicated(key, redisKey, what);
        return Optional.of(r.get(0));
    }

    private List<Object> run(IdempotencyKey key, String what, String script, String digest, byte[] redisKey, byte[]... args) {
        try {
            return node.eval(script, digest, redisKey, args);
        } catch (RedisCommandExecutionException e) {
            throw new IdempotencyStoreException(key, "Redis (" + node + ") refused the " + what + " script: " + e.getMessage(), e);
        } catch (RedisException e) {
            throw unreachable(key, what, e);
        }
    }

    /** Waits for the configured replicas after a write; refuses if fewer confirmed it. */
    private void replicated(IdempotencyKey key, byte[] redisKey, String what) {
        if (replicas == 0) {
            return;
        }
        long confirmed;
        try {
            confirmed = node.awaitReplicas(redisKey, replicas, replicaTimeout.toMillis());
        } catch (RedisCommandExecutionException e) {
            throw new IdempotencyStoreException(key, "the " + what + " was written on the Redis primary, but WAIT for " + replicas
                    + " replicas failed: " + e.getMessage(), e);
        } catch (RedisException e) {
            throw unreachable(key, "WAIT after the " + what, e);
        }
        if (confirmed < replicas) {
            throw new IdempotencyStoreException(key, "the " + what + " was written on the Redis primary, but only " + confirmed + " of "
                    + replicas + " replicas confirmed it within " + replicaTimeout.toMillis() + " ms (WAIT): a failover now could lose"
                    + " it", null);
        }
    }

    /**
     * A failure that is not the server's answer (a connection refused or lost, a command rejected
     * while disconnected, a timeout): the server could not be reached, or its answer did not come.
     */
    private StoreUnavailableException unreachable(IdempotencyKey key, String what, RedisException e) {
        return new StoreUnavailableException(key, "Redis (" + node + ") could not be reached for the " + what + ": " + e.getMessage(),
                e, RETRY_AFTER);
    }

    private byte[] redisKey(IdempotencyKey key) {
        return bytes(prefix + ":" + key.scope().length() + ":" + key.scope() + ":" + key.id());
    }

    private static byte[] flag(byte[] value) {
        return bytes(value == null ? "0" : "1");
    }

    private static byte[] orEmpty(byte[] value) {
        return value == null ? new byte[0] : value;
    }

    private static byte[] millis(Duration d) {
        return bytes(Long.toString(d.toMillis()));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Object reply) {
        return reply == null ? null : new String((byte[]) reply, StandardCharsets.UTF_8);
    }

    private static long number(Object reply) {
        return reply instanceof Long n ? n : Long.parseLong(text(reply));
    }

    private static Instant instant(Object reply) {
        return Instant.ofEpochMilli(number(reply));
    }

    @Override
    public String toString() {
        return "RedisLeasingStore[" + node + ", prefix=" + prefix + (replicas == 0 ? "" : ", WAIT " + replicas + " replicas "
                + replicaTimeout.toMillis() + " ms") + "]";
    }

    /** Builds a {@link RedisLeasingStore}. Not thread-safe; the store it builds is. */
    public static final class Builder {
        private final RedisNode node;
        private String prefix = "idempotency";
        private int replicas;
        private Duration replicaTimeout = Duration.ZERO;

        private Builder(RedisNode node) {
            this.node = node;
        }

        /**
         * @param prefix what every Redis key of the store starts with, before a colon; not empty
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
         * After every write that changed a record, waits ({@code WAIT}) until {@code replicas}
         * replicas have it, for up to {@code timeout}; fewer is refused with an
         * {@link IdempotencyStoreException} (the write stands on the primary). See the class
         * comment for what a failover can still lose.
         *
         * @param replicas how many replicas must confirm each write, at least 1
         * @param timeout how long to wait for them, positive
         * @return this builder
         */
        public Builder waitForReplicas(int replicas, Duration timeout) {
            if (replicas < 1) {
                throw new IllegalArgumentException("replicas must be at least 1, was " + replicas);
            }
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("the replica timeout must be positive, was " + timeout);
            }
            this.replicas = replicas;
            this.replicaTimeout = timeout;
            return this;
        }

        /** @return the store */
        public RedisLeasingStore build() {
            return new RedisLeasingStore(this);
        }
    }
}
