package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A dialect's DDL resource ({@link SqlDialect#ddl}): read from the class path, written for the
 * table's name, and cut into the statements that the store runs. Stateless and thread-safe.
 */
public final class Ddl {

    private static final Pattern DEFAULT_NAMES = Pattern.compile("\\bidempotency_record(_[a-z]+)?\\b");

    private Ddl() {
    }

    /**
     * @param dialect the dialect, whose class finds the resource first (a dialect of one's own, in its own module)
     * @param path the resource's class-path location
     * @param table the table
     * @return the resource, its default names ({@value SqlDialect#DEFAULT_TABLE} and the names derived
     *     from it) replaced by {@code table}'s, and {@link TableName#pending()}'s
     */
    public static String of(SqlDialect dialect, String path, TableName table) {
        String qualified = table.qualified();
        String simple = table.simpleName();
        String pending = table.pending().qualified();
        return DEFAULT_NAMES.matcher(read(dialect.getClass(), path)).replaceAll(m -> Matcher.quoteReplacement(
                m.group(1) == null ? qualified : (simple + m.group(1)).equals(table.pending().simpleName()) ? pending : simple + m.group(1)));
    }

    private static String read(Class<?> own, String path) {
        // Through the class, not its loader: on the module path only a module's own classes find
        // its resources without the package being opened.
        try (InputStream first = own.getResourceAsStream("/" + path)) {
            InputStream in = first != null ? first : SqlDialect.class.getResourceAsStream("/" + path);
            if (in == null) {
                throw new IllegalStateException("DDL resource missing from the jar: " + path);
            }
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read DDL resource " + path, e);
        }
    }

    /**
     * @param ddl statements separated by {@code ;}, with {@code --} comment lines
     * @return each statement, trimmed, without the comment lines
     */
    public static String[] statements(String ddl) {
        StringBuilder sql = new StringBuilder();
        for (String line : ddl.split("\n")) {
            if (!line.strip().startsWith("--")) {
                sql.append(line).append('\n');
            }
        }
        return Arrays.stream(sql.toString().split(";"))
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .toArray(String[]::new);
    }
}
