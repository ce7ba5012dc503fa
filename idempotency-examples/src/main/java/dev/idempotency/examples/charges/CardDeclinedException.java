package dev.idempotency.examples.charges;

/**
 * The payment provider declined the card. A final failure: retrying the same request cannot change
 * the answer, so the charge service's key policy declares it final, and it is recorded and replayed
 * like a result.
 */
public class CardDeclinedException extends Exception {

    private static final long serialVersionUID = 1L;

    /** @param message the provider's reason */
    public CardDeclinedException(String message) {
        super(message);
    }
}
