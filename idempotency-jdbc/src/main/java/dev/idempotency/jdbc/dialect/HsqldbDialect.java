package dev.idempotency.jdbc.dialect;

/** HSQLDB. (Being written: uses the standard claim of {@link SqlDialect} for now.) */
public class HsqldbDialect extends SqlDialect {

    @Override
    public String name() {
        return "HSQLDB";
    }
}
