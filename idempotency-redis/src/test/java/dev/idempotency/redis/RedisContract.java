package dev.idempotency.redis;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.testkit.LeasePrimitiveContract;
import dev.idempotency.testkit.LeasedCallContract;
import dev.idempotency.testkit.LeaseOnlyStoreFixture;
import java.time.InstantSource;

/**
 * The lease tier of the contract on a Redis store, a store without transactions: each test starts
 * from an emptied server. Another node's store is a
 * second store over the same server.
 */
abstract class RedisContract extends LeaseOnlyStoreFixture
        implements LeasePrimitiveContract<NoTransaction>, LeasedCallContract<NoTransaction> {

    /** @return the server, or cluster, the store runs its scripts on */
    abstract RedisNode server();

    /** Empties the server. */
    abstract void flush();

    /** @return the node the store is given: the server itself, unless a broken variant changes it for a node with {@code clock} */
    RedisNode node(RedisNode server, InstantSource clock) {
        return server;
    }

    @Override
    protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) {
        return storeOn(clock);
    }

    @Override
    protected IdempotencyStore<NoTransaction> storeOnAnotherNode(InstantSource clock) {
        return storeOn(clock);
    }

    private RedisLeasingStore storeOn(InstantSource clock) {
        return configure(RedisLeasingStore.builder(node(server(), clock)).keyPrefix("contract")).build();
    }

    /** @return {@code builder} with the settings of the store under test; by default none more */
    RedisLeasingStore.Builder configure(RedisLeasingStore.Builder builder) {
        return builder;
    }

    @Override
    protected void reset() {
        flush();
    }

    /** On the single server. */
    abstract static class OnOneServer extends RedisContract {
        @Override
        RedisNode server() {
            return RedisNode.of(RedisServers.single());
        }

        @Override
        void flush() {
            RedisServers.single().sync().flushall();
        }
    }

    /** On the cluster of three primaries. */
    abstract static class OnCluster extends RedisContract {
        @Override
        RedisNode server() {
            return RedisNode.of(RedisServers.cluster());
        }

        @Override
        void flush() {
            RedisServers.cluster().sync().flushall();
        }
    }
}
