package dev.idempotency.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Makes every failure message of the contract start with the promise it found broken: an
 * assertion whose description names the promise reads {@code [Contract 3.3 (replay): ...] expected
 * ...}, which this turns into {@code Contract 3.3 (replay): ... expected ...}. Other failures pass
 * through unchanged.
 */
final class PromiseFirst implements TestExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        throw promiseFirst(thrown);
    }

    /** @return {@code thrown}, or an assertion error with the same cause and stack whose message starts with the promise */
    static Throwable promiseFirst(Throwable thrown) {
        String m = thrown.getMessage();
        if (!(thrown instanceof AssertionError) || m == null || !m.startsWith("[")) {
            return thrown;
        }
        int end = m.indexOf("] \n");
        String description = end < 0 ? null : m.substring(1, end);
        if (description == null || !namesAPromise(description)) {
            return thrown;
        }
        AssertionError moved = new AssertionError(description + "\n" + m.substring(end + 3).strip(), thrown.getCause());
        moved.setStackTrace(thrown.getStackTrace());
        for (Throwable s : thrown.getSuppressed()) {
            moved.addSuppressed(s);
        }
        return moved;
    }

    private static boolean namesAPromise(String description) {
        for (Promise p : Promise.values()) {
            if (description.startsWith(p.tag() + ":")) {
                return true;
            }
        }
        return false;
    }
}
