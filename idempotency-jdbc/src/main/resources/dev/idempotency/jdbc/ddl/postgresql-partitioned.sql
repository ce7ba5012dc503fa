-- Idempotency records for PostgreSQL 12+, partitioned by expiry day (PartitionedPostgresDialect).
-- The columns are those of postgresql.sql. A partitioned table's primary key must contain the
-- partition key, so the key's uniqueness is kept by the dialect (one claimer per key at a time,
-- under an advisory lock), not by this constraint. The day partitions (idempotency_record_pYYYYMMDD,
-- UTC days of expires_at) are created ahead of time by PartitionedPostgresDialect.createPartitions;
-- the default partition only catches a record whose day has no partition yet, and should stay empty.
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
    PRIMARY KEY (scope, key_id, expires_at)
) PARTITION BY RANGE (expires_at);
CREATE INDEX IF NOT EXISTS idempotency_record_expires ON idempotency_record (expires_at);
CREATE TABLE IF NOT EXISTS idempotency_record_default PARTITION OF idempotency_record DEFAULT;
-- The named operations in progress (phases given a name), which a recovery worker resumes when
-- their client went away: one row per key, written in the claim's transaction and removed in the
-- one that records the outcome, so that finding them costs nothing when there are none.
CREATE TABLE IF NOT EXISTS idempotency_record_pending (
    scope        VARCHAR(64)  COLLATE "C" NOT NULL,
    key_id       VARCHAR(255) COLLATE "C" NOT NULL,
    operation    VARCHAR(64)  NOT NULL,
    PRIMARY KEY (scope, key_id)
);
