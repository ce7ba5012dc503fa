package dev.idempotency.dynamodb;

/**
 * The names a {@link DynamoDbLeasingStore} gives its table's key, its attributes and its status
 * values: the library's own ({@link #LIBRARY}), or names compatible with the table of AWS Lambda
 * Powertools' idempotency ({@link #POWERTOOLS}), so that a service that has one can point the store
 * at it.
 *
 * <p>Every layout keeps these attributes of its own: {@code fingerprint}, {@code owner} (the lease
 * holder's token), {@code attempts}, {@code version} (counts every write, for the conditions),
 * {@code created_ms}, {@code completed_ms}, {@code expires_ms} (the record's end in epoch
 * milliseconds, checked on every read), {@code codec} and {@code result} (binary), and
 * {@code point_codec} and {@code point_state} (the recovery point).
 *
 * <p>Immutable and thread-safe.
 */
public enum TableLayout {

    /**
     * The library's own: partition key {@code pk} (a string), time-to-live attribute {@code ttl}
     * (epoch seconds), lease end {@code lease_until_ms}, status {@code IN_PROGRESS},
     * {@code COMPLETED} or {@code FAILED} in {@code status}.
     */
    LIBRARY("pk", "ttl", "lease_until_ms", "IN_PROGRESS"),

    /**
     * Compatible with Powertools' table: partition key {@code id} (a string, no sort key),
     * time-to-live attribute {@code expiration} (epoch seconds), lease end
     * {@code in_progress_expiration} (epoch milliseconds, as Powertools writes it), status
     * {@code INPROGRESS}, {@code COMPLETED} or {@code FAILED} in {@code status}. The table, its key
     * and its time-to-live setting are shared; the records are not: the store's ids
     * ({@code prefix#scope-length:scope:id}) are not Powertools' ({@code function#hash}), it writes
     * its results in {@code result} (binary, through a codec) rather than Powertools' {@code data}
     * (JSON), no {@code validation} hash, and a {@code FAILED} status that Powertools does not
     * know. Each library reads its own records only.
     */
    POWERTOOLS("id", "expiration", "in_progress_expiration", "INPROGRESS");

    private final String partitionKey;
    private final String ttl;
    private final String leaseUntil;
    private final String inProgress;

    TableLayout(String partitionKey, String ttl, String leaseUntil, String inProgress) {
        this.partitionKey = partitionKey;
        this.ttl = ttl;
        this.leaseUntil = leaseUntil;
        this.inProgress = inProgress;
    }

    /** @return the partition key's name, a string attribute */
    public String partitionKey() {
        return partitionKey;
    }

    /** @return the time-to-live attribute's name: epoch seconds, the record's expiry rounded up */
    public String ttlAttribute() {
        return ttl;
    }

    /** @return the lease end's name: epoch milliseconds, present while the record is in progress */
    public String leaseUntilAttribute() {
        return leaseUntil;
    }

    /** @return the status value of a record in progress; the others are {@code COMPLETED} and {@code FAILED} */
    public String inProgressStatus() {
        return inProgress;
    }
}
