package dev.idempotency.r2dbc;

import io.r2dbc.spi.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The one place where the dialects' statements, written with JDBC's {@code ?} parameters, become
 * what an R2DBC driver takes: {@code ?} for MariaDB's (and MySQL's), {@code $1}, {@code $2}, ... for
 * PostgreSQL's and H2's. A {@code ?} inside a quoted literal or identifier is text, not a
 * parameter. Also splits a text of several statements (PostgreSQL's claim) into statements, since
 * a driver binds parameters into one statement only. Immutable and thread-safe.
 */
enum Placeholders {

    /** {@code ?}, as written. */
    QUESTION_MARKS,

    /** {@code $1}, {@code $2}, ... in order. */
    DOLLAR_NUMBERED;

    /** @return the form the connection's driver takes, by its database's product name */
    static Placeholders of(Connection c) {
        String product = c.getMetadata().getDatabaseProductName().toLowerCase(Locale.ROOT);
        return product.contains("mariadb") || product.contains("mysql") ? QUESTION_MARKS : DOLLAR_NUMBERED;
    }

    /**
     * @param sql a statement with {@code ?} parameters
     * @return it in this form
     */
    String translate(String sql) {
        if (this == QUESTION_MARKS) {
            return sql;
        }
        boolean[] text = quoted(sql);
        StringBuilder out = new StringBuilder(sql.length() + 8);
        int n = 0;
        for (int i = 0; i < sql.length(); i++) {
            char ch = sql.charAt(i);
            if (ch == '?' && !text[i]) {
                out.append('$').append(++n);
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }

    /**
     * @param sql a statement with {@code ?} parameters
     * @return how many parameters it binds
     */
    static int count(String sql) {
        boolean[] text = quoted(sql);
        int n = 0;
        for (int i = 0; i < sql.length(); i++) {
            if (sql.charAt(i) == '?' && !text[i]) {
                n++;
            }
        }
        return n;
    }

    /**
     * @param sql statements separated by {@code ;}
     * @return each statement, trimmed, in order; a {@code ;} inside a quoted literal separates nothing
     */
    static List<String> statements(String sql) {
        boolean[] text = quoted(sql);
        List<String> statements = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= sql.length(); i++) {
            if (i == sql.length() || sql.charAt(i) == ';' && !text[i]) {
                String statement = sql.substring(start, i).strip();
                if (!statement.isEmpty()) {
                    statements.add(statement);
                }
                start = i + 1;
            }
        }
        return statements;
    }

    /** @return for each character, whether it is inside a quoted literal or identifier ({@code '}, {@code "}, {@code `}) */
    private static boolean[] quoted(String sql) {
        boolean[] inside = new boolean[sql.length()];
        char quote = 0;
        for (int i = 0; i < sql.length(); i++) {
            char ch = sql.charAt(i);
            if (quote != 0) {
                inside[i] = true;
                if (ch == quote) {
                    quote = 0;
                }
            } else if (ch == '\'' || ch == '"' || ch == '`') {
                quote = ch;
                inside[i] = true;
            }
        }
        return inside;
    }
}
