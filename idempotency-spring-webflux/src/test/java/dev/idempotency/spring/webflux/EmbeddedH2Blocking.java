package dev.idempotency.spring.webflux;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * The blocking calls that BlockHound allows in this module's tests beyond the drivers' logins
 * ({@code DriverSetupBlocking}): r2dbc-h2's own statements. H2 is embedded: its R2DBC driver runs
 * each statement on the thread that subscribes, and on WebFlux that is Reactor Netty's event loop
 * once the request's body has arrived, whatever the filter or the handler does. Only the driver's
 * statement calls are allowed: a blocking call of the filter, the engine or the handler still fails
 * the H2 tests, and every blocking call fails the PostgreSQL ones.
 */
public final class EmbeddedH2Blocking implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        for (String method : new String[] {"prepareCommand", "query", "update", "disableAutoCommit", "enableAutoCommit", "close"}) {
            builder.allowBlockingCallsInside("io.r2dbc.h2.client.SessionClient", method);
        }
    }
}
