package dev.idempotency.jdbc.internal;

import java.util.Objects;
import java.util.regex.Pattern;

/** Validates table names from configuration, so that no SQL can be injected through them. */
public final class SqlIdentifier {

    private static final Pattern PART = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,54}");

    private SqlIdentifier() {
    }

    /**
     * @param name {@code table} or {@code schema.table}; each part a letter or underscore followed by
     *     up to 54 letters, digits or underscores (55 in all, so that the names derived from it,
     *     such as {@code <table>_expires}, stay within the 64 characters every database accepts)
     * @return the name, unchanged
     * @throws IllegalArgumentException naming the problem
     */
    public static String checkTableName(String name) {
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
        }
        return name;
    }

    /** @return the last part of a possibly schema-qualified name, for index names */
    public static String simpleName(String table) {
        int dot = table.lastIndexOf('.');
        return dot < 0 ? table : table.substring(dot + 1);
    }
}
