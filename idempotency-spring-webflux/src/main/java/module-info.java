/**
 * The {@code Idempotency-Key} header in Spring WebFlux: {@code @IdempotentWebFluxEndpoint} handler methods
 * behind a {@code WebFilter}, the key's record in the R2DBC transaction of Spring's reactive
 * transaction manager. Exports its one package.
 */
module dev.idempotency.spring.webflux {
    requires transitive dev.idempotency.http;
    requires transitive dev.idempotency.r2dbc;
    requires transitive spring.core;
    requires transitive spring.web; // the filter is a WebFilter
    requires transitive spring.webflux;
    requires transitive spring.tx; // TransactionalOperator
    requires transitive spring.r2dbc; // ConnectionFactoryUtils
    requires transitive reactor.core;
    requires transitive r2dbc.spi;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.spring.webflux;
}
