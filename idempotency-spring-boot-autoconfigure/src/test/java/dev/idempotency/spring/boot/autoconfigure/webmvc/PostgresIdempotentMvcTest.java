package dev.idempotency.spring.boot.autoconfigure.webmvc;

import dev.idempotency.spring.webmvc.IdempotentEndpoint;
import dev.idempotency.testsupport.DatabaseServer;
import java.util.List;

/**
 * {@link IdempotentEndpoint} over HTTP on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL},
 * {@code _USER}, {@code _PASSWORD}), which {@code scripts/test} starts; without it the class is skipped,
 * or fails under CI.
 */
class PostgresIdempotentMvcTest extends AbstractIdempotentMvcTest {

    @Override
    List<String> databaseProperties() {
        DatabaseServer postgres = DatabaseServer.postgres();
        return List.of("spring.datasource.url=" + postgres.url(), "spring.datasource.username=" + postgres.user(),
                "spring.datasource.password=" + postgres.password());
    }
}
