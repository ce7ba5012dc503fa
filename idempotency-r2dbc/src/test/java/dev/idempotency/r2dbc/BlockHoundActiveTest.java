package dev.idempotency.r2dbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The check that no call of the engine blocks is BlockHound, which its JUnit platform integration
 * installs for every test of this module: a blocking call on a non-blocking thread (Reactor's
 * parallel threads, the drivers' event loops, where the engine's steps run after each statement on
 * PostgreSQL and MariaDB) fails the test that made it. This proves the check is on.
 */
class BlockHoundActiveTest {

    @Test
    void aBlockingCallOnANonBlockingThreadFails() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> {
            Thread.sleep(1);
            return 1;
        }).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10))).hasCauseInstanceOf(BlockingOperationError.class);
    }
}
