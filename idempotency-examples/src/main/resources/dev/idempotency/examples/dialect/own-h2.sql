-- Idempotency records for the dialect of OwnDialect.java: H2 2.x, described from outside the library.
CREATE TABLE IF NOT EXISTS idempotency_record (
    scope        VARCHAR(64)    NOT NULL,
    key_id       VARCHAR(255)   NOT NULL,
    fingerprint  VARCHAR(64)    NOT NULL,
    status       VARCHAR(16)    NOT NULL,
    result_codec VARCHAR(64),
    result       VARBINARY(16777216),
    created_at   BIGINT         NOT NULL,
    completed_at BIGINT,
    expires_at   BIGINT         NOT NULL,
    lease_until  BIGINT,
    owner_token  VARCHAR(64),
    attempts     INTEGER        DEFAULT 1 NOT NULL,
    phase        VARCHAR(16),
    CONSTRAINT idempotency_record_pk PRIMARY KEY (scope, key_id)
);
CREATE INDEX IF NOT EXISTS idempotency_record_expires ON idempotency_record (expires_at);
-- The named operations in progress (phases given a name), which a recovery worker resumes when
-- their client went away: one row per key, written in the claim's transaction and removed in the
-- one that records the outcome, so that finding them costs nothing when there are none.
CREATE TABLE IF NOT EXISTS idempotency_record_pending (
    scope        VARCHAR(64)    NOT NULL,
    key_id       VARCHAR(255)   NOT NULL,
    operation    VARCHAR(64)    NOT NULL,
    PRIMARY KEY (scope, key_id)
);
