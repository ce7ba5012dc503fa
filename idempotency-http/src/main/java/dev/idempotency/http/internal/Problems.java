package dev.idempotency.http.internal;

import dev.idempotency.http.Response;
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
