package dev.idempotency.jdbc.dialect;

/** MariaDB. (Being written: uses the standard claim of {@link SqlDialect} for now.) */
public class MariaDbDialect extends SqlDialect {

    @Override
    public String name() {
        return "MariaDB";
    }
}
