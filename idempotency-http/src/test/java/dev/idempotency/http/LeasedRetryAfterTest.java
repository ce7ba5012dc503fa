package dev.idempotency.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * The {@code Retry-After} of a leased key in progress counts the lease's remaining time as the
 * database measured it, so a node whose own clock is off still sends the right delay.
 */
class LeasedRetryAfterTest {

    private final JdbcDataSource dataSource = new JdbcDataSource();
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();

    LeasedRetryAfterTest() {
        dataSource.setURL("jdbc:h2:mem:retry-after-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    @Test
    void aNodeWhoseClockIsOffStillCountsRetryAfterToTheLeasesEndByTheDatabase() throws Exception {
        store.createTableIfMissing(dataSource);
        Clock tenMinutesBehind = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-10)); // this node's clock
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(Idempotency.builder(store).clock(tenMinutesBehind).build(),
                JdbcTransactions.of(dataSource));
        HttpIdempotency<Connection> http = HttpIdempotency.builder(managed, LeasedIdempotency.of(managed, store)).build();
        String id = UUID.randomUUID().toString();
        Request request = Request.of("POST", "/charges", Map.of("Idempotency-Key", List.of(id)), "pay".getBytes(StandardCharsets.UTF_8));
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            assertThat(store.claimLease(c, new LeaseRequest(IdempotencyKey.of("shop-a", id), http.fingerprint(request), "another-attempt",
                    Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofSeconds(5)))).isInstanceOf(LeaseClaim.Acquired.class);
            c.commit();
        }

        HttpAnswer answer = http.handleLeased(request, "shop-a", (r, attempt) -> {
            throw new AssertionError("the attempt that holds the lease runs the handler, not this one");
        });

        assertThat(answer.response().status()).isEqualTo(409);
        assertThat(answer.response().header("Retry-After").map(Long::parseLong)).as("seconds to the end of a one-minute lease")
                .hasValueSatisfying(seconds -> assertThat(seconds).isBetween(1L, 60L));
    }
}
