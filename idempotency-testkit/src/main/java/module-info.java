/**
 * The store contract as JUnit 5 tests, and the in-memory store. Exports its one package.
 *
 * <p>JUnit reflects on the contract classes (their package-private lifecycle methods and the
 * extension they register), so the package is opened to JUnit's reflection module. QuickTheories,
 * which generates the contract's sequences, has no module name of its own: it is read as the
 * automatic module named after its jar, {@code quicktheories}, and is not part of this API.
 */
module dev.idempotency.testkit {
    requires transitive dev.idempotency;
    requires transitive org.junit.jupiter.api; // a store's test extends the contract classes
    requires org.assertj.core;
    requires quicktheories;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.testkit;
    opens dev.idempotency.testkit to org.junit.platform.commons;
}
