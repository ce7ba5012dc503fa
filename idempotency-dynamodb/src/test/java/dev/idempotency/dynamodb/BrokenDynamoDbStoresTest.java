package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.idempotency.testkit.Effort;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The lease tier is not vacuous on DynamoDB: each DynamoDB store broken in a way of its own kind
 * fails it on dynalite, with a message naming the promise it breaks. The broken contracts are nested
 * classes, which the build's test run does not pick up by itself; they run here through the JUnit
 * Platform launcher, each with a tenth of the lease property's sequences: a broken store fails in
 * the first few.
 */
class BrokenDynamoDbStoresTest {

    @Test
    void aClaimThatChecksThenPutsInTwoCallsFails() {
        assertFails(CheckThenPutContract.class, "Contract 4.1 (atomic claim)");
    }

    @Test
    void leasesJudgedByTheClientsClockFail() {
        assertFails(ClientClockContract.class, "Contract 4.6 (one clock)");
    }

    @Test
    void aCompletionWithoutTheTokenConditionFails() {
        assertFails(CompletionWithoutTokenContract.class, "Contract 4.4 (fencing)");
    }

    private static void assertFails(Class<?> contract, String promise) {
        DynamoDbServers.required("IDEMPOTENCY_DYNALITE_ENDPOINT"); // without the server, the broken contracts could not even fail
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(contract)).build(), listener);
        List<String> messages = new ArrayList<>();
        for (TestExecutionSummary.Failure f : listener.getSummary().getFailures()) {
            messages.add(f.getTestIdentifier().getDisplayName() + ": " + f.getException().getMessage());
        }
        assertThat(listener.getSummary().getTestsFoundCount()).as("tests of " + contract.getSimpleName()).isPositive();
        assertThat(messages).as(contract.getSimpleName() + " must fail the lease tier naming " + promise)
                .anySatisfy(m -> assertThat(m).contains(promise));
    }

    /** A broken contract: a tenth of the lease sequences. */
    abstract static class BrokenContract extends DynamoDbContract {
        @Override
        protected Effort effort() {
            return quickShare(10);
        }
    }

    static class CheckThenPutContract extends BrokenContract {
        private final DynamoDbClient broken = new BrokenDynamoDbStores.CheckThenPut(DynamoDbServers.client());

        @Override
        DynamoDbClient client(DynamoDbClient server) {
            return broken;
        }
    }

    static class ClientClockContract extends BrokenContract {
        @Override
        DynamoDbLeasingStore.Builder configure(DynamoDbLeasingStore.Builder builder, InstantSource clock) {
            return BrokenDynamoDbStores.clientClock(builder, clock);
        }
    }

    static class CompletionWithoutTokenContract extends BrokenContract {
        private final DynamoDbClient broken = new BrokenDynamoDbStores.CompletionWithoutToken(DynamoDbServers.client());

        @Override
        DynamoDbClient client(DynamoDbClient server) {
            return broken;
        }
    }
}
