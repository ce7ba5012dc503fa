package dev.idempotency.kafka;

import dev.idempotency.IdempotencyException;
import org.jspecify.annotations.Nullable;

/**
 * A record carries no message id (the extractor answered {@code null}, for the header extractor: the
 * header is absent), so no key can be recorded for it: it is handed to the dead-letter handler, on
 * every delivery, and not processed. The message names the consumer group, where the id was looked
 * for (the header, or the application's extractor) and the record's topic, partition and offset;
 * {@link #scope()} is the group, and {@link #keyId()} is {@code null}, the id being what is missing.
 */
public final class MissingMessageIdException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private final String group;
    private final String topic;
    private final int partition;
    private final long offset;
    private final @Nullable String header;

    MissingMessageIdException(String group, String topic, int partition, long offset, @Nullable String header) {
        super(null, null, "Consumer group '" + group + "': the record at topic '" + topic + "' partition " + partition + " offset "
                + offset + " carries no message id (" + (header == null ? "the application's MessageIds extractor found none"
                : "header '" + header + "' absent or without a value") + "): it cannot be deduplicated and is not processed", null);
        this.group = group;
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.header = header;
    }

    /** @return the consumer group, the scope the record's key would have had */
    @Override
    public String scope() {
        return group;
    }

    /** @return the record's position, {@code topic-partition@offset} */
    public String position() {
        return topic + "-" + partition + "@" + offset;
    }

    /** @return the record's topic */
    public String topic() {
        return topic;
    }

    /** @return the record's partition */
    public int partition() {
        return partition;
    }

    /** @return the record's offset */
    public long offset() {
        return offset;
    }

    /** @return the header the id was looked for in; {@code null} for an extractor of the application's own */
    public @Nullable String header() {
        return header;
    }
}
