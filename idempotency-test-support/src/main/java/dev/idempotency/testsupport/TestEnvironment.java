package dev.idempotency.testsupport;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What the environment provides to the tests, with one behaviour when something is missing: locally
 * the test is skipped (a JUnit assumption), under CI ({@code CI=true}) it fails, because there a
 * skipped test would hide a broken setup.
 */
public final class TestEnvironment {

    private TestEnvironment() {
    }

    /** @return whether the tests run under CI: the variable {@code CI} is {@code true} */
    public static boolean underCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * @param name an environment variable
     * @return its value, or {@code null} if it is not set or blank
     */
    public static String get(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value;
    }

    /**
     * @param name an environment variable
     * @param howToProvide what the message says after "{@code name} is not set: "
     * @return its value
     * @throws org.opentest4j.TestAbortedException if it is not set (the test is skipped)
     * @throws org.opentest4j.AssertionFailedError if it is not set under CI
     */
    public static String require(String name, String howToProvide) {
        String value = get(name);
        if (value == null) {
            unavailable(name + " is not set: " + howToProvide);
        }
        return value;
    }

    /**
     * Ends the calling test because something it needs is not there: skips it, or under CI fails it.
     *
     * @param message what is missing and how to provide it
     * @throws org.opentest4j.TestAbortedException always, outside CI
     * @throws org.opentest4j.AssertionFailedError always, under CI
     */
    public static void unavailable(String message) {
        if (underCi()) {
            Assertions.fail(message + " (CI=true: a missing requirement fails the test instead of skipping it)");
        }
        Assumptions.abort(message);
    }
}
