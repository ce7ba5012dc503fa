package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What an exception of the library says, and what it carries, whatever the key holds. */
class ExceptionMessagesTest {

    private static final IdempotencyKey KEY = IdempotencyKey.of("orders", "k1");

    @Test
    void controlCharactersC0DeleteAndC1AreEscapedAndNothingElse() {
        assertThat(IdempotencyException.printable("a\u0000\u001f\u0020~\u007f\u0080\u009f\u00a0é\u2028"))
                .isEqualTo("a\\u0000\\u001f ~\\u007f\\u0080\\u009f\u00a0é\u2028");
        assertThat(IdempotencyException.printable(null)).isEqualTo("null");
        InvalidKeyException e = new InvalidKeyException("sc\u0085ope", "id\u001b[31m", "the key id contains a control character");
        assertThat(e.getMessage()).isEqualTo(
                "Idempotency key (scope 'sc\\u0085ope', id 'id\\u001b[31m'): invalid key: the key id contains a control character");
        assertThat(e.scope()).isEqualTo("sc\u0085ope");
        assertThat(e.keyId()).isEqualTo("id\u001b[31m");
    }

    @Test
    void aLongKeyIsCutAfter300CharactersOfItsPrintableFormAndOnlyACutOneEndsWithDots() {
        assertThat(IdempotencyException.printable("x".repeat(300))).isEqualTo("x".repeat(300));
        assertThat(IdempotencyException.printable("x".repeat(301))).isEqualTo("x".repeat(300) + "...");
        assertThat(IdempotencyException.printable("x".repeat(5000))).isEqualTo("x".repeat(300) + "...");
        // An escape counts six characters: 49 of them and 6 more characters make 300.
        assertThat(IdempotencyException.printable("\u0001".repeat(49) + "y".repeat(5))).isEqualTo("\\u0001".repeat(49) + "yyyyy");
        assertThat(IdempotencyException.printable("\u0001".repeat(50) + "y")).isEqualTo("\\u0001".repeat(50) + "...");
    }

    @Test
    void aKeyIsNamedWhenEitherPartIsKnownAndOnlyTheReasonOtherwise() {
        assertThat(new InvalidKeyException(null, null, "the key must not be null").getMessage()).isEqualTo("invalid key: the key must not be null");
        assertThat(new InvalidKeyException(null, "k1", "no scope").getMessage()).isEqualTo("Idempotency key (scope 'null', id 'k1'): invalid key: no scope");
        assertThat(new InvalidKeyException("orders", null, "no id").getMessage())
                .isEqualTo("Idempotency key (scope 'orders', id 'null'): invalid key: no id");
    }

    @Test
    void onlyConflictsLostLeasesAndKeysInProgressAreWorthARetry() {
        assertThat(new TransactionConflictException(KEY, new RuntimeException("serialization failure")).isRetryable()).isTrue();
        assertThat(new LeaseLostException(KEY, "the lease ended").isRetryable()).isTrue();
        assertThat(new KeyInProgressException(KEY).isRetryable()).isTrue();
        assertThat(new InvalidKeyException("orders", "k1", "bad").isRetryable()).isFalse();
        assertThat(new IdempotencyStoreException(KEY, "disk full", null).isRetryable()).isFalse();
        assertThat(new TransactionRequiredException(KEY, "auto-commit").isRetryable()).isFalse();
    }

    @Test
    void exceptionsCarryWhatTheyName() {
        RecordedFailureException failure = new RecordedFailureException(KEY, "com.example.CardDeclined", "insufficient funds");
        assertThat(failure.errorType()).isEqualTo("com.example.CardDeclined");
        assertThat(failure.errorMessage()).isEqualTo("insufficient funds");
        assertThat(failure.getMessage()).contains("com.example.CardDeclined");
        MissingTableException missing = new MissingTableException(KEY, "idempotency_keys", "run the DDL", null);
        assertThat(missing.table()).isEqualTo("idempotency_keys");
        assertThat(missing.getMessage()).contains("idempotency_keys").contains("run the DDL");
    }
}
