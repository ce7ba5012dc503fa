package dev.idempotency.faults;

/**
 * Contract 9 and 7 (docs/contract.md), batch chunks with a process killed at any point: child JVMs
 * run chunks of {@value FaultClient#CHUNK} random keys of a key space shared by all of them
 * ({@code ManagedIdempotency.executeChunk}, the unit a {@code BatchJob} commits: one claim, the work
 * of one business row per claimed key, one batched recording, one commit), so that chunks of
 * different workers overlap, and are killed with SIGKILL at random moments. Each chunk's keys are
 * written down before it starts, and each key's answer once it committed.
 *
 * <p>Then a last client retries every key until it is answered, and the check
 * ({@link HistoryChecker}): each key's work committed at most once in total, every answered result is
 * the recorded one and is replayed, nothing is half-written (a chunk commits whole or not at all), no
 * key is left in progress. Databases and settings: {@link WorkloadKillTest}.
 */
class ChunkKillTest extends WorkloadKillTest {

    ChunkKillTest() {
        super(FaultClient.Mode.CHUNK);
    }
}
