package dev.idempotency.examples;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Assumptions;

/** The PostgreSQL server of the environment, for the examples' tests that need one. */
public final class PostgresEnvironment {

    private PostgresEnvironment() {
    }

    /**
     * @return {@code IDEMPOTENCY_PG_URL}; without it the calling test is skipped, or fails when
     *     {@code CI=true} (where a skipped server test would hide a broken setup)
     */
    public static String url() {
        String url = System.getenv("IDEMPOTENCY_PG_URL");
        if (url == null || url.isBlank()) {
            String message = "IDEMPOTENCY_PG_URL is not set: run the suite with scripts/test, which starts the server,"
                    + " or set IDEMPOTENCY_PG_URL, _USER and _PASSWORD to a server of your own";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(message);
            }
            Assumptions.abort(message);
        }
        return url;
    }

    /** @return {@code IDEMPOTENCY_PG_USER} */
    public static String user() {
        return System.getenv("IDEMPOTENCY_PG_USER");
    }

    /** @return {@code IDEMPOTENCY_PG_PASSWORD} */
    public static String password() {
        return System.getenv("IDEMPOTENCY_PG_PASSWORD");
    }
}
