package dev.idempotency.http.internal;

import dev.idempotency.ResultCodec;
import dev.idempotency.http.Response;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Records a {@link Response} as bytes: a 16-bit status, a 32-bit header count, each header as a
 * length-prefixed UTF-8 name and value (one entry per value), and the length-prefixed body; all
 * integers big-endian. Decoding checks every length against what is left and refuses trailing bytes.
 */
public final class ResponseCodec implements ResultCodec<Response> {

    /** The one instance. */
    public static final ResponseCodec INSTANCE = new ResponseCodec();

    private ResponseCodec() {
    }

    @Override
    public String name() {
        return "http-response-v1";
    }

    @Override
    public byte[] encode(Response response) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + response.body().length);
        out.writeBytes(ByteBuffer.allocate(2).putShort((short) response.status()).array());
        List<String[]> entries = new ArrayList<>();
        response.headers().forEach((name, values) -> values.forEach(v -> entries.add(new String[] {name, v})));
        out.writeBytes(ByteBuffer.allocate(4).putInt(entries.size()).array());
        for (String[] entry : entries) {
            prefixed(out, entry[0].getBytes(StandardCharsets.UTF_8));
            prefixed(out, entry[1].getBytes(StandardCharsets.UTF_8));
        }
        prefixed(out, response.body());
        return out.toByteArray();
    }

    private static void prefixed(ByteArrayOutputStream out, byte[] bytes) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
        out.writeBytes(bytes);
    }

    @Override
    public Response decode(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            int status = in.getShort();
            int count = in.getInt();
            if (count < 0 || count > in.remaining() / 8) {
                throw new IllegalArgumentException("a recorded response claims " + count + " headers in " + bytes.length + " bytes");
            }
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                String name = new String(read(in), StandardCharsets.UTF_8);
                String value = new String(read(in), StandardCharsets.UTF_8);
                headers.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
            }
            byte[] body = read(in);
            if (in.hasRemaining()) {
                throw new IllegalArgumentException("a recorded response has " + in.remaining() + " bytes after its body");
            }
            return Response.of(status, headers, body);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("a recorded response ends early: " + bytes.length + " bytes", e);
        }
    }

    private static byte[] read(ByteBuffer in) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("a recorded response holds a length of " + length + " with " + in.remaining() + " bytes left");
        }
        byte[] bytes = new byte[length];
        in.get(bytes);
        return bytes;
    }

    @Override
    public String toString() {
        return "ResultCodec[" + name() + "]";
    }
}
