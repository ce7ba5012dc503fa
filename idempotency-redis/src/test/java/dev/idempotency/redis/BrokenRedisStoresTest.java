package dev.idempotency.redis;

import dev.idempotency.testsupport.BrokenContracts;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;

/**
 * The lease tier is not vacuous on Redis: each Redis store broken in a way of its own kind fails it
 * on the real server, with a message naming the promise it breaks. The broken contracts are nested
 * classes, which the build's test run does not pick up by itself; they run here through the JUnit
 * Platform launcher.
 */
class BrokenRedisStoresTest {

    @Test
    void aClaimThatChecksThenSetsInTwoCallsFails() {
        assertFails(CheckThenSetContract.class, "Contract 4.1 (atomic claim)");
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
        RedisServers.required("IDEMPOTENCY_REDIS_URI"); // without the server, the broken contracts could not even fail
        BrokenContracts.assertFailsNaming(contract, promise);
    }

    static class CheckThenSetContract extends RedisContract.OnOneServer {
        @Override
        RedisNode node(RedisNode server, InstantSource clock) {
            return new BrokenRedisStores.CheckThenSet(server);
        }
    }

    static class ClientClockContract extends RedisContract.OnOneServer {
        @Override
        RedisNode node(RedisNode server, InstantSource clock) {
            return new BrokenRedisStores.ClientClock(server, clock);
        }
    }

    static class CompletionWithoutTokenContract extends RedisContract.OnOneServer {
        @Override
        RedisNode node(RedisNode server, InstantSource clock) {
            return new BrokenRedisStores.CompletionWithoutToken(server);
        }
    }
}
