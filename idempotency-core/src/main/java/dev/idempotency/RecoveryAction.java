package dev.idempotency;

/** What a {@link RecoveryWorker} did with a named operation that its client abandoned. */
public enum RecoveryAction {
    /** It took the operation over and resumed it at its recovery point; the outcome is recorded. */
    RESUMED,
    /** It resumed the operation, whose attempt failed (not finally): a later pass tries again. */
    RETRYING,
    /** It gave the operation up after its last attempt: {@link RecoveryGaveUpException} is its recorded final failure. */
    GAVE_UP,
    /** It cannot run the operation (no phases are registered under its name) and leaves it as it is. */
    REPORTED
}
