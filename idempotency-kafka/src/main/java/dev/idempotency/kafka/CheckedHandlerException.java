package dev.idempotency.kafka;

/**
 * A record's handler threw a checked exception in a consumer {@link IdempotentConsumer.Builder#retriedByCaller
 * retried by its caller}: its transaction was rolled back, nothing was recorded, and the failure, its
 * cause, reaches the caller, which tries the record again. The message names the record.
 */
public final class CheckedHandlerException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    CheckedHandlerException(String position, Exception cause) {
        super("The handler of the record at " + position + " failed with " + cause, cause);
    }
}
