package dev.idempotency.internal;

import java.nio.charset.StandardCharsets;

/** The stored form of a final failure: its class name, a newline, and its message (if any), in UTF-8. */
public final class FailureRecords {

    /** The codec name recorded with failures. */
    public static final String CODEC = "failure";

    private FailureRecords() {
    }

    public record Failure(String type, String message) {
        public byte[] encode() {
            return (message == null ? type : type + "\n" + message).getBytes(StandardCharsets.UTF_8);
        }
    }

    /**
     * The failure to record, cut (message first, then type) so that its encoded form stays within
     * {@code maxBytes}, never splitting a character.
     */
    public static Failure of(Throwable failure, int maxBytes) {
        String type = cut(failure.getClass().getName(), maxBytes);
        String message = failure.getMessage();
        if (message != null) {
            int room = maxBytes - utf8Length(type) - 1;
            message = room < 0 ? null : cut(message, room);
        }
        return new Failure(type, message);
    }

    /** The longest prefix of {@code s} whose UTF-8 form has at most {@code maxBytes} bytes. */
    static String cut(String s, int maxBytes) {
        int bytes = 0;
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            int size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + size > maxBytes) {
                break;
            }
            bytes += size;
            i += Character.charCount(cp);
        }
        return s.substring(0, i);
    }

    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    public static Failure decode(byte[] bytes) {
        if (bytes == null) {
            return new Failure("unknown", null);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        int newline = text.indexOf('\n');
        return newline < 0 ? new Failure(text, null) : new Failure(text.substring(0, newline), text.substring(newline + 1));
    }
}
