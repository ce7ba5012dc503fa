package dev.idempotency;

import dev.idempotency.internal.BuiltInCodecs;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Turns a work's result into bytes for the record, and back for a replay. Java object
 * serialization is never used.
 *
 * <p>Built-ins cover no result, {@code String}, {@code byte[]}, {@code Integer}, {@code Long},
 * {@code Boolean} and {@code UUID} (numbers, booleans and UUIDs are stored as readable UTF-8
 * text). Anything else plugs in with one line, for example with a JSON library, and is given with
 * the call ({@link IdempotentCall#of(IdempotencyKey, ResultCodec)}):
 *
 * <pre>{@code
 * ResultCodec<Receipt> receipts = ResultCodec.of("receipt-v1", json::writeValueAsString, s -> json.readValue(s, Receipt.class));
 * Outcome<Receipt> outcome = idempotency.execute(IdempotentCall.of(key, receipts), connection, () -> charge(connection));
 * }</pre>
 *
 * <p>A codec's {@link #name()} is recorded beside the result; a replay through a codec of another
 * name fails with a {@link ResultCodecException} instead of decoding garbage. So every codec has a
 * name of its own, and a result format that changes gets a new name ({@code receipt-v2}): records
 * written in the old format are then refused by name instead of being misread. A {@code null} result
 * is recorded as no bytes and never reaches a codec. Codecs must be thread-safe.
 *
 * @param <T> the result type
 */
public interface ResultCodec<T> {

    /** @return a short, stable name recorded with each result (at most 64 characters) */
    String name();

    /**
     * @param value a non-null result
     * @return its encoded form
     * @throws Exception if it cannot be encoded
     */
    byte[] encode(T value) throws Exception;

    /**
     * @param bytes an encoded form produced by {@link #encode(Object)}
     * @return the result
     * @throws Exception if it cannot be decoded
     */
    T decode(byte[] bytes) throws Exception;

    /**
     * An encoder that may throw, as JSON libraries' methods do.
     *
     * @param <T> the result type
     */
    @FunctionalInterface
    interface Encoder<T> {
        /**
         * @param value a non-null result
         * @return its text form
         * @throws Exception if it cannot be encoded
         */
        String encode(T value) throws Exception;
    }

    /**
     * A decoder that may throw, as JSON libraries' methods do.
     *
     * @param <T> the result type
     */
    @FunctionalInterface
    interface Decoder<T> {
        /**
         * @param text a text form produced by the matching encoder
         * @return the result
         * @throws Exception if it cannot be decoded
         */
        T decode(String text) throws Exception;
    }

    /**
     * A named codec from a pair of text functions (stored as UTF-8). Give each result format its
     * own name, so that a record written in one format is never decoded as another.
     *
     * @param name the recorded name, 1 to 64 printable ASCII characters, not a built-in codec's name
     *     ({@code none}, {@code string}, {@code bytes}, {@code int}, {@code long}, {@code boolean},
     *     {@code uuid}) nor {@code failure}
     * @param encoder result to text
     * @param decoder text to result
     * @param <T> the result type
     * @return the codec
     * @throws IllegalArgumentException if the name is malformed or reserved
     */
    static <T> ResultCodec<T> of(String name, Encoder<T> encoder, Decoder<T> decoder) {
        Objects.requireNonNull(encoder, "encoder");
        Objects.requireNonNull(decoder, "decoder");
        String checked = BuiltInCodecs.checkName(name);
        return new ResultCodec<>() {
            @Override
            public String name() {
                return checked;
            }

            @Override
            public byte[] encode(T value) throws Exception {
                String text = encoder.encode(value);
                if (text == null) {
                    throw new IllegalStateException("the encoder of codec '" + checked + "' returned null");
                }
                return text.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public T decode(byte[] bytes) throws Exception {
                return decoder.decode(new String(bytes, StandardCharsets.UTF_8));
            }

            @Override
            public String toString() {
                return "ResultCodec[" + checked + "]";
            }
        };
    }

    /** @return a codec that records no result and replays {@code null}, for work run for its effect */
    static ResultCodec<Void> none() {
        return BuiltInCodecs.NONE;
    }

    /** @return the codec for {@code String} results (UTF-8) */
    static ResultCodec<String> string() {
        return BuiltInCodecs.STRING;
    }

    /** @return the codec for {@code byte[]} results (stored as they are) */
    static ResultCodec<byte[]> bytes() {
        return BuiltInCodecs.BYTES;
    }

    /** @return the codec for {@code Integer} results (decimal text) */
    static ResultCodec<Integer> integer() {
        return BuiltInCodecs.INTEGER;
    }

    /** @return the codec for {@code Long} results (decimal text) */
    static ResultCodec<Long> longs() {
        return BuiltInCodecs.LONG;
    }

    /** @return the codec for {@code Boolean} results ({@code true} / {@code false}) */
    static ResultCodec<Boolean> bool() {
        return BuiltInCodecs.BOOLEAN;
    }

    /** @return the codec for {@code UUID} results (canonical text) */
    static ResultCodec<UUID> uuid() {
        return BuiltInCodecs.UUID;
    }

    /**
     * @param name a recorded codec name
     * @return the built-in codec of that name, if there is one
     */
    static Optional<ResultCodec<?>> builtIn(String name) {
        return BuiltInCodecs.byName(name);
    }
}
