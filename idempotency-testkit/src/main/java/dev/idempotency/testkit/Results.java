package dev.idempotency.testkit;

import dev.idempotency.ResultCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * The results the contract's work returns: every type of the built-in codecs ({@code String},
 * {@code byte[]}, {@code Integer}, {@code Long}, {@code Boolean}, {@code UUID}), {@code null} (the
 * {@code none} codec: no bytes are recorded), empty and large byte arrays, and a custom named codec.
 * A store must record each exactly (codec name and bytes, {@code null} included) and hand it back.
 */
final class Results {

    private Results() {
    }

    /**
     * The size of a large result: past 64 KiB, where some binary column types end; a store whose
     * limit is smaller gets a result of its limit instead ({@link #largeSize(int)}).
     */
    static final int LARGE = 100_000;

    /**
     * @param largest the store's limit ({@link StoreLimits#maxResultBytes()})
     * @return the size of {@link Kind#LARGE_BYTES}: {@link #LARGE}, or the limit if it is smaller
     */
    static int largeSize(int largest) {
        return Math.min(LARGE, largest);
    }

    /** What the work returns. */
    enum Kind {
        STRING, NULL, EMPTY_BYTES, BYTES, LARGE_BYTES, LARGEST_BYTES, INT, LONG, BOOLEAN, UUID, CUSTOM;

        /** @return whether two steps of this kind always return different values, so that a value tells its step */
        boolean unique() {
            return this != NULL && this != EMPTY_BYTES && this != BOOLEAN;
        }

        String describe(int step) {
            switch (this) {
                case STRING:
                    return "\"v" + step + "\"";
                case NULL:
                    return "null";
                case EMPTY_BYTES:
                    return "an empty byte[]";
                case BYTES:
                    return "a byte[] with 0x00 and 0xFF";
                case LARGE_BYTES:
                    return "a byte[" + LARGE + "] (or of the store's limit, if smaller)";
                case LARGEST_BYTES:
                    return "the largest byte[] the limit allows";
                case INT:
                    return "an Integer";
                case LONG:
                    return "a Long";
                case BOOLEAN:
                    return "a Boolean";
                case UUID:
                    return "a UUID";
                default:
                    return "a receipt (custom codec)";
            }
        }
    }

    /** The result type of the custom codec. */
    record Receipt(String text) {
    }

    /** A custom codec with a name of its own; the store must record the name and give it back. */
    static final ResultCodec<Receipt> RECEIPTS = ResultCodec.of("contract-receipt-v1", Receipt::text, Receipt::new);

    /**
     * @param kind what the work returns
     * @param step the step's number, from 1, which makes the value unique when the kind allows
     * @param largest the store's limit: the size of {@link Kind#LARGEST_BYTES}, and the most of
     *     {@link Kind#LARGE_BYTES}
     * @return the value
     */
    static Object value(Kind kind, int step, int largest) {
        switch (kind) {
            case LARGEST_BYTES:
                return bytesOfSize(largest, step);
            case STRING:
                return "v" + step;
            case NULL:
                return null;
            case EMPTY_BYTES:
                return new byte[0];
            case BYTES:
                return new byte[] {0, (byte) 0xFF, (byte) step, (byte) (step >> 8), 0, 10, 13, 39, 92};
            case LARGE_BYTES:
                return bytesOfSize(largeSize(largest), step);
            case INT:
                return step % 2 == 0 ? Integer.MIN_VALUE + step : Integer.MAX_VALUE - step;
            case LONG:
                return step % 2 == 0 ? Long.MIN_VALUE + step : Long.MAX_VALUE - step;
            case BOOLEAN:
                return step % 2 == 0;
            case UUID:
                return new UUID(step, -step);
            default:
                return new Receipt("r" + step + " \u00e9\u20ac\u0000");
        }
    }

    /**
     * @param size how many bytes
     * @param step makes the content differ from step to step
     * @return bytes of every value, none of them all alike
     */
    static byte[] bytesOfSize(int size, int step) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + step);
        }
        return bytes;
    }

    /** @return whether the work of this kind must be run with {@link #RECEIPTS} */
    static boolean custom(Kind kind) {
        return kind == Kind.CUSTOM;
    }

    /**
     * How a value reads in a report and compares in the model: a string as itself, other types with
     * their type's name; byte arrays by length and content.
     *
     * @param value a result
     * @return its label
     */
    static String label(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof byte[] b) {
            String content = b.length <= 12 ? HexFormat.of().formatHex(b) : "#" + Integer.toHexString(Arrays.hashCode(b));
            return "byte[" + b.length + "] " + content;
        }
        if (value instanceof Receipt r) {
            return "receipt " + r.text();
        }
        return value.getClass().getSimpleName().toLowerCase(Locale.ROOT) + " " + value;
    }

    /**
     * @param largest the store's limit ({@link StoreLimits#maxResultBytes()}), which no sample exceeds
     * @return a value of each kind, and a few more at the edges, for the example test of results
     */
    static List<Object> samples(int largest) {
        List<Object> all = new ArrayList<>();
        for (Kind k : Kind.values()) {
            if (k == Kind.LARGEST_BYTES) {
                continue; // the limit is the store's: resultOfTheLargestSizeIsRecordedAndReplayedExactly
            }
            all.add(value(k, 7, largest));
            all.add(value(k, 8, largest));
        }
        all.add("");
        all.add("\u00e9\u20ac\ud83d\ude00 and a NUL \u0000");
        all.add(0);
        all.add(-1L);
        all.add(new byte[] {0});
        all.add(new Receipt(""));
        return all;
    }
}
