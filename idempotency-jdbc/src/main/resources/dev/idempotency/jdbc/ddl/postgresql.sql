-- Idempotency records for PostgreSQL 12+. Times are epoch milliseconds (UTC by definition), so
-- neither the JVM's nor the session's time zone can shift an expiry. COLLATE "C" makes key
-- comparison byte-exact (case-sensitive, no trailing-space rules) whatever the database's locale.
CREATE TABLE IF NOT EXISTS idempotency_record (
    scope        VARCHAR(64)  COLLATE "C" NOT NULL,
    key_id       VARCHAR(255) COLLATE "C" NOT NULL,
    fingerprint  VARCHAR(64)  NOT NULL,
    status       VARCHAR(16)  NOT NULL,
    result_codec VARCHAR(64),
    result       BYTEA,
    created_at   BIGINT       NOT NULL,
    completed_at BIGINT,
    expires_at   BIGINT       NOT NULL,
    lease_until  BIGINT,
    owner_token  VARCHAR(64),
    attempts     INTEGER      DEFAULT 1 NOT NULL,
    phase        VARCHAR(16),
    PRIMARY KEY (scope, key_id)
);
CREATE INDEX IF NOT EXISTS idempotency_record_expires ON idempotency_record (expires_at);
-- The named operations in progress (phases given a name), which a recovery worker resumes when
-- their client went away: one row per key, written in the claim's transaction and removed in the
-- one that records the outcome, so that finding them costs nothing when there are none.
CREATE TABLE IF NOT EXISTS idempotency_record_pending (
    scope        VARCHAR(64)  COLLATE "C" NOT NULL,
    key_id       VARCHAR(255) COLLATE "C" NOT NULL,
    operation    VARCHAR(64)  NOT NULL,
    PRIMARY KEY (scope, key_id)
);
