package dev.idempotency.http.internal;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Response;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/** Error answers as {@code application/problem+json} (RFC 9457), written without a JSON library. */
public final class Problems {

    /** The media type of a problem. */
    public static final String MEDIA_TYPE = "application/problem+json";

    /** Key ids longer than this are cut in a problem's {@code idempotencyKey} member. */
    static final int MAX_KEY_ECHO = 300;

    private Problems() {
    }

    /**
     * @param status the status
     * @param type the problem type's URI
     * @param title a short, fixed summary of the problem type
     * @param detail what happened to this request
     * @param key the key as the client sent it, or {@code null} when there was none
     * @return the answer, with {@code Content-Type: application/problem+json}
     */
    public static Response of(int status, String type, String title, String detail, @Nullable String key) {
        StringBuilder json = new StringBuilder(256).append('{');
        member(json, "type", type).append(',');
        member(json, "title", title).append(',');
        json.append("\"status\":").append(status).append(',');
        member(json, "detail", detail);
        if (key != null) {
            json.append(',');
            member(json, "idempotencyKey", key.length() > MAX_KEY_ECHO ? key.substring(0, MAX_KEY_ECHO) + "..." : key);
        }
        return Response.of(status).withBody(MEDIA_TYPE, json.append('}').toString());
    }

    /** @return the 401 answer, problem {@code unauthenticated}, to a request without an authenticated client */
    public static Response unauthenticated() {
        return of(401, HttpIdempotency.PROBLEM_TYPES + "unauthenticated", "Unauthenticated",
                "This endpoint takes idempotency keys per authenticated client; the request has none.", null);
    }

    /**
     * @param maxRequestBytes the limit the request's body is over
     * @param key the request's key header, or {@code null} without one
     * @return the 413 answer, problem {@code request-too-large}
     */
    public static Response requestTooLarge(int maxRequestBytes, @Nullable String key) {
        return of(413, HttpIdempotency.PROBLEM_TYPES + "request-too-large", "Request too large",
                "The request body is larger than " + maxRequestBytes + " bytes.", key);
    }

    /**
     * The top-level {@code type} member of a problem body, read without a JSON library.
     *
     * @param json the body, UTF-8
     * @return the type, or {@code null} if the body is not a JSON object or its {@code type} is missing or not a string
     */
    public static @Nullable String typeOf(byte[] json) {
        return new Scanner(new String(json, StandardCharsets.UTF_8)).topLevelType();
    }

    /** Just enough of a JSON reader to find one string member of the top-level object, skipping the others. */
    private static final class Scanner {
        private final String text;
        private int at;

        Scanner(String text) {
            this.text = text;
        }

        @Nullable String topLevelType() {
            try {
                skipSpace();
                expect('{');
                String type = null;
                skipSpace();
                if (peek() == '}') {
                    return null;
                }
                while (true) {
                    skipSpace();
                    String name = string();
                    skipSpace();
                    expect(':');
                    skipSpace();
                    if (name.equals("type") && peek() == '"') {
                        type = string();
                    } else {
                        skipValue();
                    }
                    skipSpace();
                    if (peek() == ',') {
                        at++;
                        continue;
                    }
                    expect('}');
                    return type;
                }
            } catch (IllegalArgumentException | IndexOutOfBoundsException malformed) {
                return null;
            }
        }

        private void skipValue() {
            char c = peek();
            if (c == '"') {
                string();
                return;
            }
            if (c != '{' && c != '[') { // a number, true, false or null
                while (at < text.length() && ",}] \t\r\n".indexOf(text.charAt(at)) < 0) {
                    at++;
                }
                return;
            }
            int depth = 0;
            do {
                c = peek();
                if (c == '"') {
                    string();
                    continue;
                }
                if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                }
                at++;
            } while (depth > 0);
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escaped = text.charAt(at++);
                switch (escaped) {
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(escaped); // '"', '\\', '/'
                }
            }
        }

        private char peek() {
            return text.charAt(at);
        }

        private void expect(char c) {
            if (text.charAt(at) != c) {
                throw new IllegalArgumentException("expected " + c + " at " + at);
            }
            at++;
        }

        private void skipSpace() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }
    }

    private static StringBuilder member(StringBuilder json, String name, String value) {
        return quote(quote(json, name).append(':'), value);
    }

    /**
     * @param json where to append
     * @param text any text
     * @return {@code json}, with {@code text} appended as a JSON string
     */
    static StringBuilder quote(StringBuilder json, String text) {
        json.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f || Character.isSurrogate(c) || c == '\u2028' || c == '\u2029') {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"');
    }
}
