package dev.idempotency.jakarta.servlet.internal;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A request whose body was read already (for the fingerprint), served again from its bytes: as a
 * stream, as a reader, and as form parameters for {@code application/x-www-form-urlencoded}, merged
 * after the query's as the container would. Not thread-safe; one per request.
 */
public final class CachedBodyRequest extends HttpServletRequestWrapper {

    private final byte[] body;
    private @Nullable Map<String, String[]> parameters;

    /**
     * @param request the request whose body was read
     * @param body the bytes read
     */
    public CachedBodyRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
    }

    @Override
    public ServletInputStream getInputStream() {
        ByteArrayInputStream in = new ByteArrayInputStream(body);
        return new ServletInputStream() {
            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return in.read(b, off, len);
            }

            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                try {
                    listener.onDataAvailable();
                    listener.onAllDataRead();
                } catch (IOException e) {
                    listener.onError(e);
                }
            }
        };
    }

    @Override
    public BufferedReader getReader() {
        return new BufferedReader(new InputStreamReader(getInputStream(), charset()));
    }

    @Override
    public @Nullable String getParameter(String name) {
        String[] values = getParameterMap().get(name);
        return values == null || values.length == 0 ? null : values[0];
    }

    @Override
    public Enumeration<String> getParameterNames() {
        return Collections.enumeration(getParameterMap().keySet());
    }

    @Override
    public String @Nullable [] getParameterValues(String name) {
        String[] values = getParameterMap().get(name);
        return values == null ? null : values.clone();
    }

    @Override
    public Map<String, String[]> getParameterMap() {
        if (parameters == null) {
            Map<String, List<String>> merged = new LinkedHashMap<>();
            super.getParameterMap().forEach((name, values) -> merged.computeIfAbsent(name, n -> new ArrayList<>()).addAll(List.of(values)));
            if (isForm()) {
                for (String pair : new String(body, StandardCharsets.ISO_8859_1).split("&")) {
                    if (pair.isEmpty()) {
                        continue;
                    }
                    int eq = pair.indexOf('=');
                    String name = decode(eq < 0 ? pair : pair.substring(0, eq));
                    String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                    merged.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
                }
            }
            Map<String, String[]> map = new LinkedHashMap<>();
            merged.forEach((name, values) -> map.put(name, values.toArray(String[]::new)));
            parameters = Collections.unmodifiableMap(map);
        }
        return parameters;
    }

    private boolean isForm() {
        String type = getContentType();
        return type != null && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded");
    }

    private String decode(String text) {
        // the body's bytes as ISO-8859-1 keep each byte as one char; URLDecoder then decodes in the request's charset
        return URLDecoder.decode(new String(text.getBytes(StandardCharsets.ISO_8859_1), charset()), charset());
    }

    private Charset charset() {
        String encoding = getCharacterEncoding();
        return encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
    }
}
