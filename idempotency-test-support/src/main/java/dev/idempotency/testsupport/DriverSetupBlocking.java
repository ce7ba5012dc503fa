package dev.idempotency.testsupport;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * The blocking calls that BlockHound allows in the reactive modules' tests (R2DBC, WebFlux): only
 * the drivers' own, when a connection is opened (never the engine's): r2dbc-postgresql's SCRAM
 * login draws its nonce from {@code SecureRandom}, which reads {@code /dev/urandom}; r2dbc-mariadb's
 * login finds its authentication plugin with a {@code ServiceLoader}, which reads the jars, and its
 * version from a resource, once. And r2dbc-mariadb's lock of one connection, which a command's
 * emission on the event loop takes while the thread that subscribed to the command may still hold
 * it: a short wait inside the driver, between two threads of one connection. Named in this jar's
 * {@code META-INF/services}, so that BlockHound's JUnit platform integration loads it wherever it
 * installs BlockHound for every test of a module.
 */
public final class DriverSetupBlocking implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("com.ongres.scram.common.ScramFunctions", "nonce");
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.authentication.AuthenticationFlowPluginLoader", "get");
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.util.VersionFactory", "getInstance");
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.client.Exchange", "emit");
    }
}
