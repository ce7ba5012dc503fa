package dev.idempotency.spring.webflux;

/** {@link IdempotencyWebFilter} on PostgreSQL, through r2dbc-postgresql. */
class PostgresWebFluxTest extends AbstractWebFluxTest {

    @Override
    WebFluxDatabase database() {
        return WebFluxDatabase.POSTGRES;
    }
}
