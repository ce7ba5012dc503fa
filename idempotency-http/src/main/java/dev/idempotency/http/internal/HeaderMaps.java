package dev.idempotency.http.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** Immutable, case-insensitive copies of header maps. */
public final class HeaderMaps {

    private HeaderMaps() {
    }

    /**
     * @param headers header names to their values, in any case
     * @return an unmodifiable copy whose look-ups ignore case; values of one name merged, in order
     * @throws NullPointerException if a name, a value list or a value is null
     * @throws IllegalArgumentException if a name is empty or a name or value holds CR, LF or NUL
     */
    public static Map<String, List<String>> copyOf(Map<String, ? extends List<String>> headers) {
        Objects.requireNonNull(headers, "headers");
        TreeMap<String, List<String>> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        headers.forEach((name, values) -> {
            checkName(name);
            Objects.requireNonNull(values, () -> "the values of header " + name);
            for (String value : values) {
                checkValue(name, value);
                copy.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
            }
        });
        copy.replaceAll((name, values) -> List.copyOf(values));
        return Collections.unmodifiableMap(copy);
    }

    /**
     * @param name a header name
     * @return the name
     * @throws IllegalArgumentException if it is empty or holds a character outside printable ASCII
     */
    public static String checkName(String name) {
        Objects.requireNonNull(name, "header name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("a header name must not be empty");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c >= 0x7f || c == ':') {
                throw new IllegalArgumentException("header name '" + name + "' holds a character that is not allowed at index " + i);
            }
        }
        return name;
    }

    /**
     * @param name the header's name, for the message
     * @param value a header value
     * @return the value
     * @throws IllegalArgumentException if it holds CR, LF or NUL (which would split the header)
     */
    public static String checkValue(String name, String value) {
        Objects.requireNonNull(value, () -> "a value of header " + name);
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\r' || c == '\n' || c == 0) {
                throw new IllegalArgumentException("a value of header " + name + " holds CR, LF or NUL at index " + i);
            }
        }
        return value;
    }
}
