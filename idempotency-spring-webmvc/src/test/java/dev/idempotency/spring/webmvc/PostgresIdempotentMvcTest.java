package dev.idempotency.spring.webmvc;

import java.util.List;

/**
 * {@link Idempotent} over HTTP on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL},
 * {@code _USER}, {@code _PASSWORD}), which {@code scripts/test} starts.
 */
class PostgresIdempotentMvcTest extends AbstractIdempotentMvcTest {

    @Override
    List<String> databaseProperties() {
        String url = System.getenv("IDEMPOTENCY_PG_URL");
        if (url == null) {
            throw new IllegalStateException("IDEMPOTENCY_PG_URL is not set: run the suite with scripts/test, which starts the server,"
                    + " or set IDEMPOTENCY_PG_URL, _USER and _PASSWORD to a server of your own");
        }
        return List.of("spring.datasource.url=" + url, "spring.datasource.username=" + System.getenv("IDEMPOTENCY_PG_USER"),
                "spring.datasource.password=" + System.getenv("IDEMPOTENCY_PG_PASSWORD"));
    }
}
