/**
 * Lease mode on Redis, through Lettuce. Exports its one package.
 */
module dev.idempotency.redis {
    requires transitive dev.idempotency;
    requires transitive lettuce.core; // the store is built on a Lettuce connection
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.redis;
}
