package dev.idempotency;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

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
     * SHA-256 over several parts (method, path, body fields, ...). Each part is length-prefixed,
     * so {@code ("ab", "c")} and {@code ("a", "bc")} differ.
     *
     * @param parts the parts; none may be {@code null}
     * @return the fingerprint
     */
    public static Fingerprint ofParts(String... parts) {
        Objects.requireNonNull(parts, "parts");
        MessageDigest digest = sha256();
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            if (part == null) {
                throw new NullPointerException("parts[" + i + "]");
            }
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            digest.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
            digest.update(bytes);
        }
        return new Fingerprint(HexFormat.of().formatHex(digest.digest()));
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
