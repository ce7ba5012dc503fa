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

    /** The failure to record, its message cut so that the record stays within the size limit. */
    public static Failure of(Throwable failure, int maxBytes) {
        String type = failure.getClass().getName();
        String message = failure.getMessage();
        if (message != null) {
            int room = Math.max(0, maxBytes - type.length() - 1) / 4; // UTF-8 needs at most 4 bytes a char
            if (message.length() > room) {
                message = message.substring(0, room);
            }
        }
        return new Failure(type, message);
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
