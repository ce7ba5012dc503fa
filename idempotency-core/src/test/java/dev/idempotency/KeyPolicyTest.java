package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class KeyPolicyTest {

    private final KeyPolicy policy = KeyPolicy.ofDefaults();

    @Test
    void defaultsAreTheDocumentedOnes() {
        assertThat(policy.retention()).isEqualTo(Duration.ofHours(24));
        assertThat(policy.lockTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(policy.maxResultBytes()).isEqualTo(1024 * 1024);
        assertThat(policy.maxIdLength()).isEqualTo(255);
        assertThat(policy.hasFinalFailures()).isFalse();
    }

    @Test
    void aReleaseOfTheKeyIsNeverFinalWhateverThePolicyDeclares() {
        KeyPolicy everything = KeyPolicy.builder().finalFailures(RuntimeException.class).finalFailureIf(e -> true).build();
        assertThat(everything.isFinalFailure(new IllegalStateException("x"))).isTrue();
        assertThat(everything.isFinalFailure(new ReleaseKeyException("a 503", "answer"))).isFalse();
    }

    @Test
    void acceptsEveryPrintableAsciiCharacterUpToTheLimit() {
        StringBuilder all = new StringBuilder();
        for (char c = '!'; c <= '~'; c++) {
            all.append(c);
        }
        assertThat(policy.validate(IdempotencyKey.of("s", all.toString())).id()).isEqualTo(all.toString());
        assertThat(policy.validate(IdempotencyKey.of("s", "x".repeat(255))).id()).hasSize(255);
    }

    @Test
    void namesTheRuleBrokenAndTheKey() {
        assertThatThrownBy(() -> policy.validate(IdempotencyKey.of("tenant", "x".repeat(256))))
                .isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("tenant").hasMessageContaining("256 characters").hasMessageContaining("255")
                .satisfies(e -> assertThat(((InvalidKeyException) e).scope()).isEqualTo("tenant"));
        assertThatThrownBy(() -> policy.validate(IdempotencyKey.of("tenant", "a\u0000b")))
                .hasMessageContaining("control character").hasMessageContaining("U+0000").hasMessageContaining("index 1")
                .hasMessageContaining("a\\u0000b");
        assertThatThrownBy(() -> policy.validate(IdempotencyKey.of("tenant", "a\u007fb"))).hasMessageContaining("control character");
        assertThatThrownBy(() -> policy.validate(IdempotencyKey.of("t".repeat(65), "id"))).hasMessageContaining("scope");
        assertThatThrownBy(() -> policy.validate(null)).isInstanceOf(InvalidKeyException.class);
    }

    @Test
    void builderNamesTheOffendingField() {
        assertThatThrownBy(() -> KeyPolicy.builder().retention(Duration.ZERO)).hasMessageContaining("retention");
        assertThatThrownBy(() -> KeyPolicy.builder().retention(Duration.ofDays(3651))).hasMessageContaining("retention");
        assertThatThrownBy(() -> KeyPolicy.builder().lockTimeout(Duration.ofSeconds(-1))).hasMessageContaining("lockTimeout");
        assertThatThrownBy(() -> KeyPolicy.builder().maxIdLength(256)).hasMessageContaining("maxIdLength");
        assertThatThrownBy(() -> KeyPolicy.builder().maxResultBytes(-1)).hasMessageContaining("maxResultBytes");
    }

    @Test
    void theDocumentedLimitsThemselvesAreAccepted() {
        KeyPolicy widest = KeyPolicy.builder().maxIdLength(KeyPolicy.DEFAULT_MAX_ID_LENGTH).maxScopeLength(KeyPolicy.DEFAULT_MAX_SCOPE_LENGTH)
                .retention(KeyPolicy.MAX_RETENTION).maxResultBytes(16 * 1024 * 1024).build();
        assertThat(widest.retention()).isEqualTo(KeyPolicy.MAX_RETENTION);
        assertThat(widest.maxScopeLength()).isEqualTo(64);
        assertThat(widest.maxResultBytes()).isEqualTo(16 * 1024 * 1024);
        KeyPolicy narrowest = KeyPolicy.builder().maxIdLength(1).maxScopeLength(1).retention(Duration.ofMillis(1)).maxResultBytes(0).build();
        assertThat(narrowest.maxIdLength()).isEqualTo(1);
        assertThat(narrowest.maxScopeLength()).isEqualTo(1);
        assertThat(narrowest.retention()).isEqualTo(Duration.ofMillis(1));
        assertThat(narrowest.maxResultBytes()).isZero();
        assertThat(narrowest.validate(IdempotencyKey.of("s", "k")).id()).isEqualTo("k");
        assertThatThrownBy(() -> narrowest.validate(IdempotencyKey.of("sc", "k"))).hasMessageContaining("scope is 2 characters long");
        assertThatThrownBy(() -> KeyPolicy.builder().retention(KeyPolicy.MAX_RETENTION.plusMillis(1))).hasMessageContaining("retention");
        assertThatThrownBy(() -> KeyPolicy.builder().maxIdLength(0)).hasMessageContaining("maxIdLength");
        assertThatThrownBy(() -> KeyPolicy.builder().maxScopeLength(65)).hasMessageContaining("maxScopeLength");
        assertThatThrownBy(() -> KeyPolicy.builder().maxResultBytes(16 * 1024 * 1024 + 1)).hasMessageContaining("maxResultBytes");
    }

    @Test
    void finalFailuresMatchSubtypesAndPredicates() {
        KeyPolicy p = KeyPolicy.builder().finalFailures(IOException.class).finalFailureIf(t -> "final".equals(t.getMessage())).build();
        assertThat(p.isFinalFailure(new java.io.FileNotFoundException())).isTrue();
        assertThat(p.isFinalFailure(new IllegalStateException("final"))).isTrue();
        assertThat(p.isFinalFailure(new IllegalStateException("transient"))).isFalse();
        assertThat(p.toBuilder().build().isFinalFailure(new IOException())).isTrue();
    }

    private final KeyPolicy uuids = KeyPolicy.builder().idFormat(KeyPolicy.IdFormat.UUID).build();

    @Test
    void aUuidPolicyAcceptsVersionsFourAndSevenInEitherCase() {
        String v4 = java.util.UUID.randomUUID().toString();
        assertThat(uuids.validate(IdempotencyKey.of("s", v4)).id()).isEqualTo(v4);
        assertThat(uuids.validate(IdempotencyKey.of("s", v4.toUpperCase(java.util.Locale.ROOT))).id()).isEqualTo(v4.toUpperCase(java.util.Locale.ROOT));
        assertThat(uuids.validate(IdempotencyKey.of("s", "01932c07-2d2a-7c3e-9f4b-6a1d0e8c5b7a")).id()).startsWith("01932c07");
        assertThat(uuids.idFormat()).isEqualTo(KeyPolicy.IdFormat.UUID);
        assertThat(policy.idFormat()).isEqualTo(KeyPolicy.IdFormat.ANY);
        assertThat(uuids.toBuilder().build().idFormat()).isEqualTo(KeyPolicy.IdFormat.UUID);
        assertThat(uuids.validateScope("tenant-7")).as("the id format says nothing of scopes").isEqualTo("tenant-7");
        assertThatThrownBy(() -> uuids.validateScope("t".repeat(65))).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("scope is 65 characters long");
        assertThatThrownBy(() -> uuids.validateScope("a b")).hasMessageContaining("scope contains a space");
    }

    @Test
    void aUuidPolicyRefusesCountersTimestampsHashesAndOtherVersionsNamingTheRule() {
        for (String id : new String[] {"1", "2", "1764633600000", "2026-12-02T15:00:00Z", "3f2b6c1e9a4d4e7f8b215c0d9e8a7f61",
                "{3f2b6c1e-9a4d-4e7f-8b21-5c0d9e8a7f61}", "3f2b6c1e-9a4d-4e7f-8b21-5c0d9e8a7f6g", "3f2b6c1e-9a4d-4e7f-8b21_5c0d9e8a7f61"}) {
            assertThatThrownBy(() -> uuids.validate(IdempotencyKey.of("s", id))).as(id).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("must be a UUID (version 4 or 7) in its canonical form");
            assertThat(policy.validate(IdempotencyKey.of("s", id)).id()).as("the default policy accepts %s", id).isEqualTo(id);
        }
        String v1 = "c232ab00-9414-11ec-b3c8-9f6bdeced846";
        String v3 = java.util.UUID.nameUUIDFromBytes("POST /charges amount=100".getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString();
        for (String id : new String[] {v1, v3, "00000000-0000-0000-0000-000000000000", "1ec9414c-232a-6b00-b3c8-9f6bdeced846"}) {
            assertThatThrownBy(() -> uuids.validate(IdempotencyKey.of("s", id))).as(id).isInstanceOf(InvalidKeyException.class)
                    .hasMessageMatching(".*(of version [0-9]|RFC 9562's variant).*");
        }
        assertThatThrownBy(() -> uuids.validate(IdempotencyKey.of("s", "3f2b6c1e-9a4d-4e7f-cb21-5c0d9e8a7f61")))
                .hasMessageContaining("RFC 9562's variant").hasMessageContaining("it has c");
        assertThatThrownBy(() -> uuids.validate(IdempotencyKey.of("s", v1))).hasMessageContaining("it is of version 1");
    }
}
