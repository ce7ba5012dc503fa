package dev.idempotency.spring.webflux;

/** {@link IdempotencyWebFilter} on H2, through r2dbc-h2. */
class H2WebFluxTest extends AbstractWebFluxTest {

    @Override
    WebFluxDatabase database() {
        return WebFluxDatabase.H2;
    }
}
