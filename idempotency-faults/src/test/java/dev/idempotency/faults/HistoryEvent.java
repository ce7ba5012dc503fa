package dev.idempotency.faults;

import java.util.Objects;

/**
 * One line of a client's history: an attempt began ({@link Type#INVOKE}), or ended with an answer the
 * client saw. An attempt killed before its answer leaves only its {@code INVOKE}: indeterminate.
 *
 * @param client the client (a thread or a child JVM) that made the attempt
 * @param type what happened
 * @param key the key's id
 * @param detail for {@link Type#ACK}: the outcome ({@code EXECUTED} or {@code REPLAYED}), a space, the
 *     value; for {@link Type#FAIL}: the exception's class name; otherwise empty
 */
record HistoryEvent(String client, Type type, String key, String detail) {

    /** What a history line records. */
    enum Type {
        /** An attempt began. */
        INVOKE,
        /** The attempt's transaction committed and the client saw the outcome: acknowledged. */
        ACK,
        /** The key was held by another attempt ({@code InProgress}); the transaction was rolled back. */
        BUSY,
        /** An exception reached the client; the transaction was rolled back (or was lost with its connection). */
        FAIL
    }

    HistoryEvent {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(detail, "detail");
        if ((client + key + detail).contains("\t") || (client + key + detail).contains("\n")) {
            throw new IllegalArgumentException("a history field holds a tab or a line break: " + client + " " + key + " " + detail);
        }
    }

    static HistoryEvent invoke(String client, String key) {
        return new HistoryEvent(client, Type.INVOKE, key, "");
    }

    static HistoryEvent ack(String client, String key, boolean executed, String value) {
        return new HistoryEvent(client, Type.ACK, key, (executed ? "EXECUTED " : "REPLAYED ") + value);
    }

    static HistoryEvent busy(String client, String key) {
        return new HistoryEvent(client, Type.BUSY, key, "");
    }

    static HistoryEvent fail(String client, String key, Throwable failure) {
        return new HistoryEvent(client, Type.FAIL, key, failure.getClass().getName());
    }

    /** @return for an {@code ACK}, whether the work ran in that attempt */
    boolean executed() {
        return type == Type.ACK && detail.startsWith("EXECUTED ");
    }

    /** @return for an {@code ACK}, the value the client was answered */
    String value() {
        if (type != Type.ACK) {
            throw new IllegalStateException("not an acknowledgement: " + this);
        }
        return detail.substring(detail.indexOf(' ') + 1);
    }

    String line() {
        return client + "\t" + type + "\t" + key + "\t" + detail;
    }

    /** @return the event of a complete line */
    static HistoryEvent parse(String line) {
        String[] f = line.split("\t", -1);
        if (f.length != 4) {
            throw new IllegalArgumentException("not a history line: " + line);
        }
        return new HistoryEvent(f[0], Type.valueOf(f[1]), f[2], f[3]);
    }
}
