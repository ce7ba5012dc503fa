package dev.idempotency.testsupport;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs the contract of a deliberately broken store (a test class the build itself does not run) with
 * the JUnit launcher, and checks that it fails naming the promise the store breaks: a store test's
 * proof that the contract can fail. Stateless.
 */
public final class BrokenContracts {

    private BrokenContracts() {
    }

    /**
     * @param contract the broken store's contract class
     * @param promise the text its failure must contain, such as {@code "Contract 4.1 (atomic claim)"}
     * @throws AssertionError if no test of {@code contract} ran, or none failed naming {@code promise}
     */
    public static void assertFailsNaming(Class<?> contract, String promise) {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(contract)).build(), listener);
        List<String> messages = new ArrayList<>();
        for (TestExecutionSummary.Failure f : listener.getSummary().getFailures()) {
            messages.add(f.getTestIdentifier().getDisplayName() + ": " + f.getException().getMessage());
        }
        if (listener.getSummary().getTestsFoundCount() == 0) {
            throw new AssertionError("no test of " + contract.getSimpleName() + " ran");
        }
        if (messages.stream().noneMatch(m -> m.contains(promise))) {
            throw new AssertionError(contract.getSimpleName() + " must fail the lease tier naming " + promise + "; its failures: " + messages);
        }
    }
}
