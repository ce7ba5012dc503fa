package dev.idempotency;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What one idempotent call is about: its key, its request fingerprint and the codec of its result.
 * Every entry point takes one ({@link Idempotency#execute(IdempotentCall, Object, Work)},
 * {@link ManagedIdempotency#execute(IdempotentCall, TxWork)}, {@link ManagedIdempotency#writeLast},
 * {@link LeasedIdempotency#lease}, {@link LeasedIdempotency#run}, and per item in
 * {@code executeChunk} and {@link BatchJob}), or the bare key as the one shortcut for a call with
 * neither fingerprint nor codec.
 *
 * <pre>{@code
 * IdempotentCall.of(key)                                   // no fingerprint, codec chosen by the result's type
 * IdempotentCall.of(key, fingerprint)                      // a fingerprint, codec chosen by the result's type
 * IdempotentCall.of(key, receiptCodec)                     // an explicit codec
 * IdempotentCall.of(key, fingerprint, receiptCodec)        // both
 * }</pre>
 *
 * <p><b>Fingerprint.</b> Without one ({@link Fingerprint#NONE}), a key used again replays whatever
 * the first request recorded. With one, the same key with another fingerprint gives
 * {@link Outcome.Mismatch}.
 *
 * <p><b>Codec.</b> Without one, a built-in codec is chosen by the result's type ({@code String},
 * {@code byte[]}, {@code Integer}, {@code Long}, {@code Boolean}, {@code UUID} or {@code null}); any
 * other type needs a codec. A replay then decodes the result with the built-in codec named in the
 * record, whatever type the call now expects: erasure leaves the engine no way to know {@code T}.
 * If the work's result type changed since the record was written (an {@code Integer} then, a
 * {@code String} now), the caller's own use of the replayed value throws
 * {@code ClassCastException}. Give the codec ({@link ResultCodec#string()}, a named one, ...) to
 * have such a record refused with a {@link ResultCodecException} that names the recorded codec and
 * the expected type.
 *
 * <p>{@link #withFingerprint} takes its result type from where the call is used, as the factories
 * do: {@code IdempotentCall.of(key).withFingerprint(fingerprint)} is a call of the work's type, not
 * of {@code Object} (the type {@code of(key)} gets as the receiver of a method).
 *
 * <p>{@code execute(null, tx, work)} does not compile: a bare {@code null} fits both the key and the
 * call overloads of every entry point. A {@code null} key or call held in a typed variable is
 * refused with a {@link NullPointerException} naming the argument ({@code key}, {@code call}),
 * before the store is used.
 *
 * <p>Immutable and thread-safe: a value, compared by key, fingerprint and codec.
 *
 * @param <T> the result type
 */
public final class IdempotentCall<T> {

    private final IdempotencyKey key;
    private final Fingerprint fingerprint;
    private final @Nullable ResultCodec<T> codec;

    private IdempotentCall(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec) {
        this.key = key;
        this.fingerprint = fingerprint;
        this.codec = codec;
    }

    /**
     * @param key the key
     * @param <T> the result type: one with a built-in codec
     * @return a call without a fingerprint, whose result's codec is chosen by its type
     * @throws NullPointerException if {@code key} is {@code null}
     */
    public static <T> IdempotentCall<T> of(IdempotencyKey key) {
        return new IdempotentCall<>(Objects.requireNonNull(key, "key"), Fingerprint.NONE, null);
    }

    /**
     * @param key the key
     * @param fingerprint the request's fingerprint
     * @param <T> the result type: one with a built-in codec
     * @return a call with a fingerprint, whose result's codec is chosen by its type
     * @throws NullPointerException if an argument is {@code null}
     */
    public static <T> IdempotentCall<T> of(IdempotencyKey key, Fingerprint fingerprint) {
        return new IdempotentCall<>(Objects.requireNonNull(key, "key"), Objects.requireNonNull(fingerprint, "fingerprint"), null);
    }

    /**
     * @param key the key
     * @param codec encodes the result for the record and decodes it for a replay
     * @param <T> the result type
     * @return a call without a fingerprint, with an explicit codec
     * @throws NullPointerException if an argument is {@code null}
     */
    public static <T> IdempotentCall<T> of(IdempotencyKey key, ResultCodec<T> codec) {
        return new IdempotentCall<>(Objects.requireNonNull(key, "key"), Fingerprint.NONE, Objects.requireNonNull(codec, "codec"));
    }

    /**
     * @param key the key
     * @param fingerprint the request's fingerprint
     * @param codec encodes the result for the record and decodes it for a replay
     * @param <T> the result type
     * @return a call with a fingerprint and an explicit codec
     * @throws NullPointerException if an argument is {@code null}
     */
    public static <T> IdempotentCall<T> of(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec) {
        return new IdempotentCall<>(Objects.requireNonNull(key, "key"), Objects.requireNonNull(fingerprint, "fingerprint"),
                Objects.requireNonNull(codec, "codec"));
    }

    /**
     * This call with another fingerprint, typed by where it is used: after {@code of(key)}, whose
     * receiver type is {@code IdempotentCall<Object>}, the result is a call of the work's type, as
     * {@code of(key, fingerprint)} would be. A call with a codec keeps it: {@code U} is then the
     * codec's type (what the compiler infers from a call used with it); do not narrow it to a
     * subtype, which the codec does not decode to.
     *
     * @param fingerprint the request's fingerprint ({@link Fingerprint#NONE} for none)
     * @param <U> the result type: {@code T}, or, for a call whose codec is chosen by the result's
     *     type, the type where the call is used
     * @return this call with that fingerprint
     * @throws NullPointerException if {@code fingerprint} is {@code null}
     */
    @SuppressWarnings("unchecked") // U is T, or a call without a codec, which holds nothing of its type
    public <U extends T> IdempotentCall<U> withFingerprint(Fingerprint fingerprint) {
        return new IdempotentCall<>(key, Objects.requireNonNull(fingerprint, "fingerprint"), (ResultCodec<U>) codec);
    }

    /** @return the key */
    public IdempotencyKey key() {
        return key;
    }

    /** @return the request's fingerprint; {@link Fingerprint#NONE} if the call has none */
    public Fingerprint fingerprint() {
        return fingerprint;
    }

    /** @return the result's codec; empty if it is chosen by the result's type */
    public Optional<ResultCodec<T>> codec() {
        return Optional.ofNullable(codec);
    }

    /** @return the codec, or {@code null} to choose a built-in one by the result's type */
    @Nullable ResultCodec<T> codecOrNull() {
        return codec;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotentCall<?> other && key.equals(other.key) && fingerprint.equals(other.fingerprint)
                && Objects.equals(codec, other.codec);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, fingerprint, codec);
    }

    /** @return the key, the fingerprint and the codec's name, for logs and messages */
    @Override
    public String toString() {
        return "IdempotentCall[key=" + key + ", " + fingerprint + ", codec=" + (codec == null ? "by result type" : codec.name()) + "]";
    }
}
