package dev.idempotency.jdbc.dialect;

/** SQLite. (Being written: uses the standard claim of {@link SqlDialect} for now.) */
public class SqliteDialect extends SqlDialect {

    @Override
    public String name() {
        return "SQLite";
    }
}
