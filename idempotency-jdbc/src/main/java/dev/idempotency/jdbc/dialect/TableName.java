package dev.idempotency.jdbc.dialect;

import dev.idempotency.jdbc.internal.ReservedWords;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The name of the idempotency table, {@code table} or {@code schema.table}, checked once when it is
 * made: each part is a plain SQL identifier (so no SQL can be injected through it) and not a
 * reserved word of SQL or of a supported database. Dialects receive only names of this type, so
 * they can write it into SQL as it is.
 *
 * <p>The name is written unquoted, so each database folds its letter case as it does for the
 * caller's own unquoted names. Two names are equal when they are written alike.
 *
 * <p>Immutable and thread-safe.
 */
public final class TableName {

    private static final Pattern PART = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,54}");

    /** The default table, {@value SqlDialect#DEFAULT_TABLE}. */
    public static final TableName DEFAULT = of(SqlDialect.DEFAULT_TABLE);

    private final String qualified;
    private final String schema;
    private final String simpleName;

    private TableName(String qualified, String schema, String simpleName) {
        this.qualified = qualified;
        this.schema = schema;
        this.simpleName = simpleName;
    }

    /**
     * @param name {@code table} or {@code schema.table}; each part a letter or underscore followed by
     *     up to 54 letters, digits or underscores (55 in all, so that the names derived from it,
     *     such as {@code <table>_expires}, stay within the 64 characters every database accepts),
     *     and not a reserved word such as {@code order}, {@code user} or {@code group}
     * @return the checked name
     * @throws IllegalArgumentException naming the problem
     * @throws NullPointerException if {@code name} is null
     */
    public static TableName of(String name) {
        Objects.requireNonNull(name, "table");
        String[] parts = name.split("\\.", -1);
        if (parts.length > 2) {
            throw new IllegalArgumentException("table name '" + name + "' has more than two parts; use table or schema.table");
        }
        for (String part : parts) {
            if (!PART.matcher(part).matches()) {
                throw new IllegalArgumentException("table name '" + name + "' is not a plain SQL identifier: each part must"
                        + " start with a letter or underscore and hold at most 55 letters, digits or underscores");
            }
            if (ReservedWords.isReserved(part)) {
                throw new IllegalArgumentException("table name '" + name + "' uses the reserved word '" + part + "', which"
                        + " SQL or a supported database (PostgreSQL, MariaDB, MySQL, H2, SQLite, HSQLDB) does not accept as"
                        + " an unquoted name (and names are never quoted); choose another name");
            }
        }
        return parts.length == 2 ? new TableName(name, parts[0], parts[1]) : new TableName(name, null, name);
    }

    /** The suffix of {@link #pending()}'s name. */
    static final String PENDING_SUFFIX = "_pending";

    /**
     * @return the table of the named operations in progress, which a recovery worker reads: this
     *     table's name (in the same schema) followed by {@code _pending}
     */
    public TableName pending() {
        return new TableName(qualified + PENDING_SUFFIX, schema, simpleName + PENDING_SUFFIX);
    }

    /** @return the name as written in SQL: {@code table} or {@code schema.table} */
    public String qualified() {
        return qualified;
    }

    /** @return the table's own name, without its schema: for the names derived from it (index, constraint) */
    public String simpleName() {
        return simpleName;
    }

    /** @return the schema, if the name has one */
    public Optional<String> schema() {
        return Optional.ofNullable(schema);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TableName other && qualified.equals(other.qualified);
    }

    @Override
    public int hashCode() {
        return qualified.hashCode();
    }

    /** @return {@link #qualified()}, so that the name can be written into SQL as it is */
    @Override
    public String toString() {
        return qualified;
    }
}
