package dev.idempotency.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.http.Response;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResponseCodecTest {

    private final ResponseCodec codec = ResponseCodec.INSTANCE;

    @Test
    void aResponseComesBackEqualWithItsHeadersInOrderAndItsBytes() {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("Content-Type", List.of("application/octet-stream"));
        headers.put("Link", List.of("<a>; rel=next", "<b>; rel=prev"));
        headers.put("X-Note", List.of("\u00fcml\u00e4ut"));
        byte[] body = {0, -1, 10, 13, 127, -128};
        Response response = Response.of(402, headers, body);

        Response decoded = codec.decode(codec.encode(response));

        assertThat(decoded).isEqualTo(response);
        assertThat(decoded.headers().get("link")).containsExactly("<a>; rel=next", "<b>; rel=prev");
        assertThat(decoded.body()).isEqualTo(body);
        assertThat(codec.decode(codec.encode(Response.of(204)))).isEqualTo(Response.of(204));
    }

    @Test
    void aTruncatedOrPaddedRecordIsRefusedNotMisread() {
        byte[] bytes = codec.encode(Response.of(201).withBody("application/json", "{\"id\":1}"));
        for (int length = 0; length < bytes.length; length++) {
            byte[] cut = Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> codec.decode(cut)).as("%d of %d bytes", length, bytes.length)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        byte[] padded = Arrays.copyOf(bytes, bytes.length + 1);
        assertThatThrownBy(() -> codec.decode(padded)).hasMessageContaining("after its body");
    }

    @Test
    void aProblemIsJsonWithEveryCharacterEscaped() {
        Response problem = Problems.of(400, "https://example.com/p", "Title", "a \"quoted\" \\ detail\n", "k\u0001\u2028");

        assertThat(problem.header("Content-Type")).hasValue("application/problem+json");
        assertThat(problem.bodyText()).isEqualTo("{\"type\":\"https://example.com/p\",\"title\":\"Title\",\"status\":400,"
                + "\"detail\":\"a \\\"quoted\\\" \\\\ detail\\n\",\"idempotencyKey\":\"k\\u0001\\u2028\"}");
        assertThat(Problems.of(409, "t", "T", "d", "x".repeat(400)).bodyText()).contains("\"idempotencyKey\":\"" + "x".repeat(300) + "...\"");
    }
}
