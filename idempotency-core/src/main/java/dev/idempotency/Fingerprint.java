package dev.idempotency;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.time.temporal.TemporalAccessor;
import java.time.temporal.TemporalAmount;
import java.util.Objects;
import java.util.UUID;

/**
 * A digest of the request that a key stands for. The same key with a different fingerprint is
 * misuse (a client reusing a key for another request) and gives {@link Outcome.Mismatch}: the
 * work never runs.
 *
 * <p>Fingerprints are optional. A call without one uses {@link #NONE}, which is compared like any
 * other fingerprint: a key first used without a fingerprint and retried with one is a mismatch.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class Fingerprint {

    /** The fingerprint of a call that supplies none. */
    public static final Fingerprint NONE = new Fingerprint("-");

    /** Length of {@link #value()} for digests: 64 hex characters. */
    public static final int HEX_LENGTH = 64;

    private final String value;

    private Fingerprint(String value) {
        this.value = value;
    }

    /**
     * SHA-256 over raw bytes, such as a request body.
     *
     * @param request the request's bytes
     * @return the fingerprint
     */
    public static Fingerprint of(byte[] request) {
        Objects.requireNonNull(request, "request");
        return new Fingerprint(HexFormat.of().formatHex(sha256().digest(request)));
    }

    /**
     * SHA-256 over a string's UTF-8 bytes.
     *
     * @param request a canonical form of the request
     * @return the fingerprint
     */
    public static Fingerprint of(String request) {
        Objects.requireNonNull(request, "request");
        return of(request.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * SHA-256 over several parts (method, path, body fields, ...), each encoded with its kind and
     * length, so that different lists of parts never share an encoding: {@code ("ab", "c")} and
     * {@code ("a", "bc")} differ, and so do {@code null}, {@code "null"} and {@code ""}, and the
     * number {@code 1} and the text {@code "1"}.
     *
     * <p>A part is one of:
     * <ul>
     *   <li>{@code null}, a value of its own (an absent optional field);</li>
     *   <li>a {@code String};</li>
     *   <li>an integer: {@code Byte}, {@code Short}, {@code Integer}, {@code Long} or
     *       {@code BigInteger}, by its value ({@code 1} and {@code 1L} are the same part, so that a
     *       field that widens from {@code int} to {@code long} between deploys keeps its
     *       fingerprints);</li>
     *   <li>a {@code Float} or {@code Double}, by its value as a {@code double};</li>
     *   <li>a {@code BigDecimal}, by its numeric value ({@code 1.0} and {@code 1.00} are the same
     *       part);</li>
     *   <li>a {@code Boolean}, a {@code byte[]} (its contents), a {@code UUID};</li>
     *   <li>an enum constant, by its {@link Enum#name() name} (so renaming or moving the enum class
     *       keeps fingerprints; renaming the constant changes them);</li>
     *   <li>a {@code java.time} value ({@code Instant}, {@code LocalDate}, {@code OffsetDateTime},
     *       {@code Duration}, ...), by its type and ISO-8601 text.</li>
     * </ul>
     * Any other type is refused: its {@code toString()} is not a reliable request form. Convert it
     * to one of the above.
     *
     * <p>Parts that are all well-formed strings give the same fingerprints as in earlier versions,
     * which took strings only.
     *
     * @param parts the parts; a part may be {@code null}
     * @return the fingerprint
     * @throws NullPointerException if the array itself is {@code null}
     * @throws IllegalArgumentException if a part is of a type that has no defined encoding
     */
    public static Fingerprint ofParts(Object... parts) {
        return new Fingerprint(HexFormat.of().formatHex(sha256().digest(encodeParts(parts))));
    }

    /**
     * The bytes that {@link #ofParts} digests. Each part is self-delimiting, so the concatenation
     * decodes in exactly one way: a well-formed string is its UTF-8 length (a non-negative 32-bit
     * integer) and its UTF-8 bytes, as in the strings-only encoding of earlier versions; any other
     * part is a negative 32-bit kind tag, the payload's length and the payload.
     */
    static byte[] encodeParts(Object... parts) {
        Objects.requireNonNull(parts, "parts");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < parts.length; i++) {
            Object part = parts[i];
            if (part instanceof String text && isWellFormed(text)) {
                lengthPrefixed(out, text.getBytes(StandardCharsets.UTF_8));
            } else {
                out.writeBytes(ByteBuffer.allocate(4).putInt(tagOf(part, i)).array());
                lengthPrefixed(out, payloadOf(part));
            }
        }
        return out.toByteArray();
    }

    private static final int NULL = -1;
    private static final int UTF16_STRING = -2;
    private static final int BOOLEAN = -3;
    private static final int INTEGER = -4;
    private static final int FLOATING = -5;
    private static final int DECIMAL = -6;
    private static final int BYTES = -7;
    private static final int UUID_TAG = -8;
    private static final int ENUM = -9;
    private static final int TIME = -10;

    private static int tagOf(Object part, int index) {
        if (part == null) {
            return NULL;
        } else if (part instanceof String) {
            return UTF16_STRING; // an unpaired surrogate, which UTF-8 cannot carry
        } else if (part instanceof Boolean) {
            return BOOLEAN;
        } else if (part instanceof Byte || part instanceof Short || part instanceof Integer || part instanceof Long
                || part instanceof BigInteger) {
            return INTEGER;
        } else if (part instanceof Float || part instanceof Double) {
            return FLOATING;
        } else if (part instanceof BigDecimal) {
            return DECIMAL;
        } else if (part instanceof byte[]) {
            return BYTES;
        } else if (part instanceof UUID) {
            return UUID_TAG;
        } else if (part instanceof Enum<?>) {
            return ENUM;
        } else if ((part instanceof TemporalAccessor || part instanceof TemporalAmount)
                && part.getClass().getPackageName().equals("java.time")) {
            return TIME;
        }
        throw new IllegalArgumentException("parts[" + index + "] is a " + part.getClass().getName()
                + ", which has no defined fingerprint encoding; pass a String, an integer, a Float, Double or"
                + " BigDecimal, a Boolean, a byte[], a UUID, an enum constant, a java.time value or null");
    }

    private static byte[] payloadOf(Object part) {
        if (part == null) {
            return new byte[0];
        } else if (part instanceof String text) {
            ByteBuffer units = ByteBuffer.allocate(2 * text.length()); // every UTF-16 unit as it is: no encoder replaces any
            units.asCharBuffer().put(text);
            return units.array();
        } else if (part instanceof Boolean b) {
            return new byte[] {(byte) (b ? 1 : 0)};
        } else if (part instanceof BigInteger big) {
            return big.toString().getBytes(StandardCharsets.US_ASCII);
        } else if (part instanceof Float || part instanceof Double) {
            return ByteBuffer.allocate(8).putLong(Double.doubleToLongBits(((Number) part).doubleValue())).array();
        } else if (part instanceof BigDecimal decimal) {
            return decimal.stripTrailingZeros().toString().getBytes(StandardCharsets.US_ASCII);
        } else if (part instanceof Number integer) {
            return Long.toString(integer.longValue()).getBytes(StandardCharsets.US_ASCII);
        } else if (part instanceof byte[] bytes) {
            return bytes;
        } else if (part instanceof UUID id) {
            return ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array();
        } else if (part instanceof Enum<?> constant) {
            return constant.name().getBytes(StandardCharsets.UTF_8);
        }
        ByteArrayOutputStream time = new ByteArrayOutputStream();
        lengthPrefixed(time, part.getClass().getSimpleName().getBytes(StandardCharsets.US_ASCII));
        time.writeBytes(part.toString().getBytes(StandardCharsets.US_ASCII));
        return time.toByteArray();
    }

    private static void lengthPrefixed(ByteArrayOutputStream out, byte[] bytes) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
        out.writeBytes(bytes);
    }

    /** Whether UTF-8 carries the string exactly: no unpaired surrogate. */
    private static boolean isWellFormed(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Re-creates a fingerprint from its stored {@link #value()}. For store implementations.
     *
     * @param value a value previously returned by {@link #value()}
     * @return the fingerprint
     * @throws IllegalArgumentException if the value is neither {@code "-"} nor 64 hex characters
     */
    public static Fingerprint fromValue(String value) {
        Objects.requireNonNull(value, "value");
        if (value.equals(NONE.value)) {
            return NONE;
        }
        if (value.length() != HEX_LENGTH || !value.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw new IllegalArgumentException("not a stored fingerprint: '" + value + "'");
        }
        return new Fingerprint(value);
    }

    /** @return the stored form: 64 lowercase hex characters, or {@code "-"} for {@link #NONE} */
    public String value() {
        return value;
    }

    String hex() {
        return value;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Fingerprint other && value.equals(other.value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return this == NONE ? "Fingerprint[none]" : "Fingerprint[" + value + "]";
    }
}
