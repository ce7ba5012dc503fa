package dev.idempotency;

/**
 * What a {@link RecoveryWorker} records as the final failure of a named operation that it gave up
 * after its last attempt: the operation needs a person's attention (what its call did outside the
 * database may have to be settled by hand). A client that comes back with the key gets it replayed
 * ({@link Outcome.Failed}), and the worker's listener hears {@link RecoveryAction#GAVE_UP}.
 */
public class RecoveryGaveUpException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the operation's key
     * @param operation its registered name
     * @param attempts the attempts it had
     */
    public RecoveryGaveUpException(IdempotencyKey key, String operation, int attempts) {
        super(key, "operation '" + operation + "' was given up by the recovery worker after " + attempts + " attempts, none of"
                + " which recorded an outcome; it needs attention: settle what its call did outside the database, if anything", null);
    }

    /** @return {@code false}: the failure is recorded, and a retry with the key gets it back */
    @Override
    public boolean isRetryable() {
        return false;
    }
}
