/**
 * The store contract as JUnit 5 tests, and the reference in-memory store.
 */
module dev.idempotency.testkit {
    requires transitive dev.idempotency;
    requires transitive org.junit.jupiter.api;
    requires org.assertj.core;
    requires quicktheories;
    requires org.slf4j;
    requires static transitive org.jspecify;

    exports dev.idempotency.testkit;
}
