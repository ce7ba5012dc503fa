package dev.idempotency.faults;

import dev.idempotency.testsupport.TestEnvironment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 4 and 7 (docs/contract.md), lease mode with a process killed at any point: child JVMs
 * run a charge in phases ({@link LeaseWorkload}: prepare committed with the claim, a call to a
 * service outside the database keyed by the attempt's downstream key, finish committed with the
 * result) on keys shared by all of them, and are killed with SIGKILL at random moments, so that
 * kills land in the claim, the prepare, the call, the finish and between them. The killed attempts
 * leave claims whose leases end on their own; the next attempt takes them over and resumes.
 *
 * <p>Then a last client retries every key until it is answered, and the check: each key's prepare
 * committed once and finished, the service made one effect per key (it deduplicates on the
 * downstream key, and counts what it really made), every answer is that effect, at most one answer
 * per key says it ran, and no key is left in progress ({@link HistoryChecker}). Databases and
 * settings: {@link WorkloadKillTest}.
 *
 * <p>The same loop runs on the stores without transactions ({@link LeaseStore}): on Redis
 * ({@link RedisLeaseStore}, the single server of scripts/redis.sh) and on DynamoDB
 * ({@link DynamoDbLeaseStore}, the dynalite server of scripts/dynalite.sh), two JVMs of four threads
 * at once, the every-build {@value WorkloadKillTest#KILLS} kills or the deep setting's.
 */
class LeaseKillTest extends WorkloadKillTest {

    LeaseKillTest() {
        super(FaultClient.Mode.LEASE);
    }

    @Test
    void redis(@TempDir Path dir) throws Exception {
        String uri = TestEnvironment.require("IDEMPOTENCY_REDIS_URI",
                "start the Redis server with `env_lines=\"$(scripts/redis.sh start single)\" && eval \"$env_lines\"` (scripts/test does it)");
        KilledChildren.killAndCheck(new RedisLeaseStore(uri.strip()), dir, 2, 4, KEYS, LEASE, KILLS);
    }

    @Test
    void dynamodb(@TempDir Path dir) throws Exception {
        String endpoint = TestEnvironment.require("IDEMPOTENCY_DYNALITE_ENDPOINT",
                "start the dynalite server with `env_lines=\"$(scripts/dynalite.sh start)\" && eval \"$env_lines\"` (scripts/test does it)");
        KilledChildren.killAndCheck(new DynamoDbLeaseStore(endpoint.strip()), dir, 2, 4, KEYS, LEASE, KILLS);
    }
}
