package dev.idempotency.kafka;

import dev.idempotency.IdempotencyException;

/**
 * A record carries no message id (the extractor answered {@code null}, for the header extractor: the
 * header is absent), so no key can be recorded for it: it is handed to the dead-letter handler, on
 * every delivery, and not processed.
 */
public final class MissingMessageIdException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** The record's position, {@code topic-partition@offset}. */
    private final String position;

    MissingMessageIdException(String group, String position) {
        super(group, null, "the record at " + position + " carries no message id: it cannot be deduplicated and is not processed", null);
        this.position = position;
    }

    /** @return the record's position, {@code topic-partition@offset} */
    public String position() {
        return position;
    }
}
