-- Idempotency records for the dialect of DerbyDialect.java: Apache Derby 10.16,
-- described from outside the library. Derby has no CREATE ... IF NOT EXISTS: run this once, where
-- the table is missing (the store runs every statement as written). Times are epoch milliseconds.
CREATE TABLE idempotency_record (
    scope        VARCHAR(64)    NOT NULL,
    key_id       VARCHAR(255)   NOT NULL,
    fingerprint  VARCHAR(64)    NOT NULL,
    status       VARCHAR(16)    NOT NULL,
    result_codec VARCHAR(64),
    result       BLOB(16M),
    created_at   BIGINT         NOT NULL,
    completed_at BIGINT,
    expires_at   BIGINT         NOT NULL,
    lease_until  BIGINT,
    owner_token  VARCHAR(64),
    attempts     INTEGER        DEFAULT 1 NOT NULL,
    phase        VARCHAR(16),
    CONSTRAINT idempotency_record_pk PRIMARY KEY (scope, key_id)
);
CREATE INDEX idempotency_record_expires ON idempotency_record (expires_at);
-- The named operations in progress (phases given a name), which a recovery worker resumes when
-- their client went away: one row per key, written in the claim's transaction and removed in the
-- one that records the outcome, so that finding them costs nothing when there are none.
CREATE TABLE idempotency_record_pending (
    scope        VARCHAR(64)    NOT NULL,
    key_id       VARCHAR(255)   NOT NULL,
    operation    VARCHAR(64)    NOT NULL,
    PRIMARY KEY (scope, key_id)
);
-- The database's clock in epoch milliseconds, by which lease mode judges every lease: the JVM's
-- clock of an embedded database (the Derby network server's own, over the network).
CREATE FUNCTION idempotency_now_millis() RETURNS BIGINT LANGUAGE JAVA PARAMETER STYLE JAVA NO SQL
    EXTERNAL NAME 'java.lang.System.currentTimeMillis'
