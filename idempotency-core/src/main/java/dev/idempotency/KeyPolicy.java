package dev.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The rules a key must satisfy and the limits that apply to its record. Immutable and
 * thread-safe; build one with {@link #builder()} or take {@link #ofDefaults()}.
 *
 * <p>By default a key id is 1 to {@value #DEFAULT_MAX_ID_LENGTH} characters of printable ASCII
 * ({@code '!'} to {@code '~'}: no spaces, no control characters), and a scope 1 to
 * {@value #DEFAULT_MAX_SCOPE_LENGTH} characters of the same set. Ids are compared exactly: case
 * matters, and no character is trimmed. {@link Builder#idFormat(IdFormat)} narrows the ids accepted
 * to {@link IdFormat#UUID UUIDs}, for a public API whose clients should each mint a random key per
 * operation and never send a counter, a timestamp or a hash of the request.
 */
public final class KeyPolicy {

    /** Default and largest allowed length of a key id, in characters. */
    public static final int DEFAULT_MAX_ID_LENGTH = 255;
    /** Default and largest allowed length of a scope, in characters. */
    public static final int DEFAULT_MAX_SCOPE_LENGTH = 64;
    /** The longest retention accepted: 3650 days. */
    public static final Duration MAX_RETENTION = Duration.ofDays(3650);
    /** How long a completed record answers retries: 24 hours. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    /** How long an attempt waits for another transaction that holds the same key: 5 seconds. */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);
    /** Largest encoded result accepted: 1 MiB. */
    public static final int DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

    private static final KeyPolicy DEFAULTS = builder().build();

    /**
     * What a key id must look like, beyond the length and characters every id keeps to.
     */
    public enum IdFormat {
        /** Any id of printable ASCII without spaces, within the length limit: the default. */
        ANY,
        /**
         * A UUID of version 4 (random) or 7 (time-ordered, random below the millisecond), in the
         * canonical text form of RFC 9562: 36 characters, {@code 8-4-4-4-12} hexadecimal digits,
         * either case, with the RFC's variant. Other versions are refused: 1 and 6 are built from
         * a clock and a node, 3 and 5 are hashes of a name (of a request, say, which the same
         * client would send again for a new operation), 8 is whatever its maker chose, and the nil
         * and max UUIDs are no one's key. Version 7 is accepted for clients that mint
         * database-friendly keys; its 74 random bits keep two clients' keys of one millisecond
         * apart as surely as version 4's 122. The id is compared as sent (an upper-case and a
         * lower-case form are two keys): a client sends the same string on every retry.
         */
        UUID
    }

    private final int maxIdLength;
    private final IdFormat idFormat;
    private final int maxScopeLength;
    private final Duration retention;
    private final Duration lockTimeout;
    private final int maxResultBytes;
    private final List<Class<? extends Exception>> finalFailureTypes;
    private final @Nullable Predicate<? super Throwable> finalFailure;

    private KeyPolicy(Builder b) {
        this.maxIdLength = b.maxIdLength;
        this.idFormat = b.idFormat;
        this.maxScopeLength = b.maxScopeLength;
        this.retention = b.retention;
        this.lockTimeout = b.lockTimeout;
        this.maxResultBytes = b.maxResultBytes;
        this.finalFailureTypes = List.copyOf(b.finalFailureTypes);
        this.finalFailure = b.finalFailure;
    }

    /** @return the default policy */
    public static KeyPolicy ofDefaults() {
        return DEFAULTS;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder starting from this policy's settings */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxIdLength = maxIdLength;
        b.idFormat = idFormat;
        b.maxScopeLength = maxScopeLength;
        b.retention = retention;
        b.lockTimeout = lockTimeout;
        b.maxResultBytes = maxResultBytes;
        b.finalFailureTypes.addAll(finalFailureTypes);
        b.finalFailure = finalFailure;
        return b;
    }

    /**
     * Checks a key against this policy.
     *
     * @param key the key; may be {@code null}
     * @return the same key
     * @throws InvalidKeyException naming the rule broken
     */
    public IdempotencyKey validate(@Nullable IdempotencyKey key) {
        if (key == null) {
            throw new InvalidKeyException(null, null, "the key must not be null");
        }
        check(key, "scope", key.scope(), maxScopeLength);
        check(key, "key id", key.id(), maxIdLength);
        if (idFormat == IdFormat.UUID) {
            checkUuid(key);
        }
        return key;
    }

    /**
     * Checks a scope alone against this policy, for a server that checks the scope it maps a
     * client to before it reads the client's key.
     *
     * @param scope the scope
     * @return the same scope
     * @throws InvalidKeyException naming the rule broken
     */
    public String validateScope(String scope) {
        Objects.requireNonNull(scope, "scope");
        check(IdempotencyKey.of(scope, "-"), "scope", scope, maxScopeLength);
        return scope;
    }

    private static void checkUuid(IdempotencyKey key) {
        String id = key.id();
        boolean canonical = id.length() == 36;
        for (int i = 0; canonical && i < 36; i++) {
            char c = id.charAt(i);
            canonical = (i == 8 || i == 13 || i == 18 || i == 23) ? c == '-' : Character.digit(c, 16) >= 0;
        }
        if (!canonical) {
            throw new InvalidKeyException(key.scope(), id, "the key id must be a UUID (version 4 or 7) in its canonical form,"
                    + " 8-4-4-4-12 hexadecimal digits such as 3f2b6c1e-9a4d-4e7f-8b21-5c0d9e8a7f61; it is not one");
        }
        int version = Character.digit(id.charAt(14), 16);
        int variant = Character.digit(id.charAt(19), 16);
        if (variant < 8 || variant > 0xb) {
            throw new InvalidKeyException(key.scope(), id, "the key id must be a UUID of RFC 9562's variant (the digit after"
                    + " the third hyphen 8, 9, a or b); it has " + id.charAt(19));
        }
        if (version != 4 && version != 7) {
            throw new InvalidKeyException(key.scope(), id, "the key id must be a UUID of version 4 (random) or 7"
                    + " (time-ordered random); it is of version " + version);
        }
    }

    private static void check(IdempotencyKey key, String what, String value, int max) {
        if (value.isEmpty() || value.isBlank()) {
            throw new InvalidKeyException(key.scope(), key.id(), "the " + what + " must not be blank");
        }
        if (value.length() > max) {
            throw new InvalidKeyException(key.scope(), key.id(),
                    "the " + what + " is " + value.length() + " characters long, over the limit of " + max);
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '!' || c > '~') {
                String name = c == ' ' ? "a space" : (c < ' ' || c == 0x7f) ? "a control character" : "a non-ASCII character";
                throw new InvalidKeyException(key.scope(), key.id(), String.format(
                        "the %s contains %s (U+%04X) at index %d; only printable ASCII without spaces is allowed",
                        what, name, (int) c, i));
            }
        }
    }

    /**
     * Whether a failure of the work is final: recorded and replayed to every retry, instead of
     * passing through unrecorded. Only exceptions can be final; errors always pass through, and so
     * does a {@link ReleaseKeyException}, whatever the declared types and predicate say: it asks for
     * nothing of the key to be recorded.
     *
     * @param failure what the work threw
     * @return whether it is declared final
     */
    public boolean isFinalFailure(Throwable failure) {
        if (failure instanceof ReleaseKeyException) {
            return false;
        }
        for (Class<? extends Exception> type : finalFailureTypes) {
            if (type.isInstance(failure)) {
                return true;
            }
        }
        return finalFailure != null && finalFailure.test(failure);
    }

    /** @return whether any failure can be final; if not, no savepoint is ever taken */
    public boolean hasFinalFailures() {
        return !finalFailureTypes.isEmpty() || finalFailure != null;
    }

    /** @return the largest key id length, in characters */
    public int maxIdLength() {
        return maxIdLength;
    }

    /** @return what a key id must look like */
    public IdFormat idFormat() {
        return idFormat;
    }

    /** @return the largest scope length, in characters */
    public int maxScopeLength() {
        return maxScopeLength;
    }

    /** @return how long a completed record answers retries; after it, the key counts as new */
    public Duration retention() {
        return retention;
    }

    /** @return how long an attempt waits for another transaction holding the same key */
    public Duration lockTimeout() {
        return lockTimeout;
    }

    /** @return the largest encoded result accepted, in bytes */
    public int maxResultBytes() {
        return maxResultBytes;
    }

    @Override
    public String toString() {
        return "KeyPolicy[maxIdLength=" + maxIdLength + ", idFormat=" + idFormat + ", maxScopeLength=" + maxScopeLength + ", retention=" + retention
                + ", lockTimeout=" + lockTimeout + ", maxResultBytes=" + maxResultBytes + ", finalFailures=" + finalFailureTypes
                + (finalFailure == null ? "" : " + predicate") + "]";
    }

    /** Builds a {@link KeyPolicy}. Not thread-safe; the policy it builds is. */
    public static final class Builder {
        private int maxIdLength = DEFAULT_MAX_ID_LENGTH;
        private IdFormat idFormat = IdFormat.ANY;
        private int maxScopeLength = DEFAULT_MAX_SCOPE_LENGTH;
        private Duration retention = DEFAULT_RETENTION;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private int maxResultBytes = DEFAULT_MAX_RESULT_BYTES;
        private final List<Class<? extends Exception>> finalFailureTypes = new ArrayList<>();
        private @Nullable Predicate<? super Throwable> finalFailure;

        private Builder() {
        }

        /**
         * @param maxIdLength 1 to {@value #DEFAULT_MAX_ID_LENGTH}
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder maxIdLength(int maxIdLength) {
            this.maxIdLength = range("maxIdLength", maxIdLength, 1, DEFAULT_MAX_ID_LENGTH);
            return this;
        }

        /**
         * @param idFormat what a key id must look like: {@link IdFormat#ANY} (the default) or
         *     {@link IdFormat#UUID}
         * @return this builder
         */
        public Builder idFormat(IdFormat idFormat) {
            this.idFormat = Objects.requireNonNull(idFormat, "idFormat");
            return this;
        }

        /**
         * @param maxScopeLength 1 to {@value #DEFAULT_MAX_SCOPE_LENGTH}
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder maxScopeLength(int maxScopeLength) {
            this.maxScopeLength = range("maxScopeLength", maxScopeLength, 1, DEFAULT_MAX_SCOPE_LENGTH);
            return this;
        }

        /**
         * @param retention how long a completed record answers retries; positive, at most
         *     {@link #MAX_RETENTION}
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder retention(Duration retention) {
            Objects.requireNonNull(retention, "retention");
            if (retention.isNegative() || retention.isZero() || retention.compareTo(MAX_RETENTION) > 0) {
                throw new IllegalArgumentException("retention must be positive and at most " + MAX_RETENTION + ", was " + retention);
            }
            this.retention = retention;
            return this;
        }

        /**
         * @param lockTimeout how long to wait for a concurrent holder of the key; zero or more.
         *     Stores may round it up to their own granularity (JDBC stores: whole seconds on some
         *     databases).
         * @return this builder
         * @throws IllegalArgumentException naming the field if negative
         */
        public Builder lockTimeout(Duration lockTimeout) {
            Objects.requireNonNull(lockTimeout, "lockTimeout");
            if (lockTimeout.isNegative()) {
                throw new IllegalArgumentException("lockTimeout must not be negative, was " + lockTimeout);
            }
            this.lockTimeout = lockTimeout;
            return this;
        }

        /**
         * @param maxResultBytes 0 to 16 MiB
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder maxResultBytes(int maxResultBytes) {
            this.maxResultBytes = range("maxResultBytes", maxResultBytes, 0, 16 * 1024 * 1024);
            return this;
        }

        /**
         * Declares exceptions of these types (and their subtypes) final: when the work throws one,
         * its partial writes are undone to a savepoint, the failure (type and message) is recorded,
         * and every retry gets {@link Outcome.Failed} instead of running the work again.
         *
         * @param types exception types, such as a declined-card or validation exception
         * @return this builder
         */
        @SafeVarargs
        public final Builder finalFailures(Class<? extends Exception>... types) {
            for (Class<? extends Exception> type : Objects.requireNonNull(types, "types")) {
                finalFailureTypes.add(Objects.requireNonNull(type, "types[]"));
            }
            return this;
        }

        /**
         * Declares final every failure that the predicate accepts, in addition to
         * {@link #finalFailures(Class[]) the listed types}.
         *
         * @param predicate decides whether a failure is final
         * @return this builder
         */
        public Builder finalFailureIf(Predicate<? super Throwable> predicate) {
            this.finalFailure = Objects.requireNonNull(predicate, "predicate");
            return this;
        }

        /** @return the policy */
        public KeyPolicy build() {
            return new KeyPolicy(this);
        }

        private static int range(String field, int value, int min, int max) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(field + " must be between " + min + " and " + max + ", was " + value);
            }
            return value;
        }
    }
}
