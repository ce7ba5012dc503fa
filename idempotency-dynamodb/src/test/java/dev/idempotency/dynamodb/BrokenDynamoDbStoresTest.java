package dev.idempotency.dynamodb;

import dev.idempotency.testkit.Effort;
import dev.idempotency.testsupport.BrokenContracts;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
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
        BrokenContracts.assertFailsNaming(contract, promise);
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
