-- Idempotency records for MariaDB 10.6+ and MySQL 8 (InnoDB). Times are epoch milliseconds (UTC by
-- definition), so neither the JVM's nor the session's time zone can shift an expiry.
-- scope and key_id are VARBINARY: compared byte for byte, so 'abc' and 'ABC' are two keys and no
-- trailing space is padded or trimmed (the default collations, and even ascii_bin, do one or both).
-- attempts counts the attempts that reached the row while claiming it (a concurrent duplicate adds 1).
CREATE TABLE IF NOT EXISTS idempotency_record (
    scope        VARBINARY(64)  NOT NULL,
    key_id       VARBINARY(255) NOT NULL,
    fingerprint  VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    status       VARCHAR(16)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    result_codec VARCHAR(64)    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    result       LONGBLOB,
    created_at   BIGINT         NOT NULL,
    completed_at BIGINT,
    expires_at   BIGINT         NOT NULL,
    lease_until  BIGINT,
    owner_token  VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin,
    attempts     INTEGER        DEFAULT 1 NOT NULL,
    phase        VARCHAR(16)    CHARACTER SET ascii COLLATE ascii_bin,
    PRIMARY KEY (scope, key_id),
    KEY idempotency_record_expires (expires_at)
) ENGINE=InnoDB;
-- The named operations in progress (phases given a name), which a recovery worker resumes when
-- their client went away: one row per key, written in the claim's transaction and removed in the
-- one that records the outcome, so that finding them costs nothing when there are none.
CREATE TABLE IF NOT EXISTS idempotency_record_pending (
    scope        VARBINARY(64)  NOT NULL,
    key_id       VARBINARY(255) NOT NULL,
    operation    VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    PRIMARY KEY (scope, key_id)
) ENGINE=InnoDB;
