package dev.idempotency.quarkus;

import dev.idempotency.testsupport.DatabaseServer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link QuarkusIdempotencyTest}'s checks on the PostgreSQL server of the environment
 * ({@code IDEMPOTENCY_PG_URL}, ...): the datasource's kind is fixed when Quarkus builds the
 * application, so this profile builds and starts it once more. Without the server's variables the
 * run fails, naming them ({@link DatabaseServer}): Quarkus reads the profile when JUnit discovers
 * the class, before a test could be skipped, so it fails outside CI as well as under it.
 */
@QuarkusTest
@TestProfile(QuarkusPostgresIdempotencyTest.Postgres.class)
class QuarkusPostgresIdempotencyTest extends QuarkusIdempotencyTest {

    /** The application on PostgreSQL. */
    public static final class Postgres implements QuarkusTestProfile {

        @Override
        public Map<String, String> getConfigOverrides() {
            DatabaseServer postgres = DatabaseServer.postgres();
            Map<String, String> config = new HashMap<>();
            config.put("quarkus.datasource.db-kind", "postgresql");
            config.put("quarkus.datasource.jdbc.url", postgres.url());
            if (postgres.user() != null) {
                config.put("quarkus.datasource.username", postgres.user());
                config.put("quarkus.datasource.password", postgres.password() == null ? "" : postgres.password());
            }
            return config;
        }
    }
}
