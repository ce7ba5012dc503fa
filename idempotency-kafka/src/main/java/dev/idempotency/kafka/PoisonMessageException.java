package dev.idempotency.kafka;

/**
 * A record's handler failed on every attempt the consumer gives it: the failure is recorded as final
 * under the record's key (so a redelivery replays it instead of running the handler again), and the
 * record is handed to the dead-letter handler. The key policy of the consumer's engine must declare
 * this type final ({@code KeyPolicy.builder().finalFailures(PoisonMessageException.class)});
 * {@link IdempotentConsumer.Builder#build()} checks it. The recorded message names the record, the
 * attempts and the last failure.
 */
public final class PoisonMessageException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    PoisonMessageException(String position, int attempts, Throwable last) {
        super("The record at " + position + " failed " + attempts + (attempts == 1 ? " attempt" : " attempts")
                + ", the last with " + last, last);
    }
}
