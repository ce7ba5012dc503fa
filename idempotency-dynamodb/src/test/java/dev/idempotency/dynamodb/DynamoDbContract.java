package dev.idempotency.dynamodb;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.Effort;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.testkit.LeaseOnlyStoreFixture;
import dev.idempotency.testkit.LeasePrimitiveContract;
import dev.idempotency.testkit.LeasedCallContract;
import java.time.Duration;
import java.time.InstantSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The lease tier of the contract on a DynamoDB store on dynalite, a store without transactions: a
 * table of its own per test class, emptied before each test. Another node's store is a second store
 * over the same client; it ignores the node's clock, as the store reads none of the application's.
 * A lease is let run out past the estimate's uncertainty ({@link #leaseJudgementDelay()}).
 */
abstract class DynamoDbContract extends LeaseOnlyStoreFixture
        implements LeasePrimitiveContract<NoTransaction>, LeasedCallContract<NoTransaction> {

    private DynamoDbLeasingStore store;

    /** @return the layout under test; by default the library's */
    TableLayout layout() {
        return TableLayout.LIBRARY;
    }

    /** @return the client the store is given: the server's own, unless a broken variant changes what it sends */
    DynamoDbClient client(DynamoDbClient server) {
        return server;
    }

    /** @return {@code builder} with the settings of the store under test, for a node whose clock is {@code clock} */
    DynamoDbLeasingStore.Builder configure(DynamoDbLeasingStore.Builder builder, InstantSource clock) {
        return builder;
    }

    /**
     * @param share the part of the quick effort's lease sequences to run, unless the deep effort is
     *     asked for ({@code -Didempotency.testkit.effort=deep})
     * @return the effort
     */
    static Effort quickShare(int share) {
        Effort chosen = Effort.fromSystemProperty();
        return chosen.equals(Effort.quick())
                ? new Effort(chosen.sequences(), chosen.concurrentRounds(), Math.max(1, chosen.leaseSequences() / share)) : chosen;
    }

    private String table() {
        return "contract-" + getClass().getSimpleName();
    }

    @Override
    protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) {
        store = storeOn(clock);
        store.createTableIfMissing();
        return store;
    }

    @Override
    protected IdempotencyStore<NoTransaction> storeOnAnotherNode(InstantSource clock) {
        return storeOn(clock);
    }

    private DynamoDbLeasingStore storeOn(InstantSource clock) {
        DynamoDbLeasingStore.Builder builder = DynamoDbLeasingStore.builder(client(DynamoDbServers.client()), table()).layout(layout())
                .keyPrefix("contract").clockCalibration(Duration.ofSeconds(10));
        return configure(builder, clock).build();
    }

    @Override
    protected Duration leaseJudgementDelay() {
        return store.clockUncertainty();
    }

    @Override
    protected void reset() {
        DynamoDbServers.empty(DynamoDbServers.client(), table(), layout().partitionKey());
    }
}
