package dev.idempotency.jdbc.dialect;

/** PostgreSQL. (Being written: uses the standard claim of {@link SqlDialect} for now.) */
public class PostgresDialect extends SqlDialect {

    @Override
    public String name() {
        return "PostgreSQL";
    }
}
