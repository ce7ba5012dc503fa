package dev.idempotency.jakarta.servlet;

import dev.idempotency.http.Response;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The handler's response held back until its transaction has committed: the status and headers go
 * to the response (which stays uncommitted), the body is kept here, and nothing is flushed.
 * {@code sendError} and {@code sendRedirect} set the status (and {@code Location}) instead of
 * committing, so that they are recorded like any answer. Not thread-safe; one per request.
 */
final class CapturedResponse extends HttpServletResponseWrapper {

    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private @Nullable ServletOutputStream stream;
    private @Nullable PrintWriter writer;
    private boolean used;

    CapturedResponse(HttpServletResponse response) {
        super(response);
    }

    /** Marks this response as the one a chain runs into. */
    CapturedResponse use() {
        used = true;
        return this;
    }

    @Override
    public ServletOutputStream getOutputStream() {
        if (writer != null) {
            throw new IllegalStateException("getWriter() was called already on this response");
        }
        if (stream == null) {
            stream = new ServletOutputStream() {
                @Override
                public void write(int b) {
                    body.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    body.write(b, off, len);
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setWriteListener(WriteListener listener) {
                    try {
                        listener.onWritePossible();
                    } catch (IOException e) {
                        listener.onError(e);
                    }
                }
            };
        }
        return stream;
    }

    @Override
    public PrintWriter getWriter() {
        if (stream != null) {
            throw new IllegalStateException("getOutputStream() was called already on this response");
        }
        if (writer == null) {
            writer = new PrintWriter(new OutputStreamWriter(body, Charset.forName(getCharacterEncoding())));
        }
        return writer;
    }

    @Override
    public void setContentLength(int len) {
        // the length is set when the body is written out
    }

    @Override
    public void setContentLengthLong(long len) {
        // the length is set when the body is written out
    }

    @Override
    public void flushBuffer() {
        if (writer != null) {
            writer.flush();
        }
    }

    @Override
    public boolean isCommitted() {
        return false;
    }

    @Override
    public void reset() {
        super.reset();
        resetBuffer();
    }

    @Override
    public void resetBuffer() {
        if (writer != null) {
            writer.flush();
        }
        body.reset();
    }

    @Override
    public int getBufferSize() {
        return Integer.MAX_VALUE;
    }

    @Override
    public void sendError(int sc, String msg) {
        resetBuffer();
        setStatus(sc);
    }

    @Override
    public void sendError(int sc) {
        resetBuffer();
        setStatus(sc);
    }

    @Override
    public void sendRedirect(String location) {
        resetBuffer();
        setStatus(SC_FOUND);
        setHeader("Location", location);
    }

    /** @return whether the chain ran into this response: then its status and headers are on the response */
    boolean used() {
        return used;
    }

    /** @return the response as the handler wrote it */
    Response captured() {
        if (writer != null) {
            writer.flush();
        }
        HttpServletResponse response = (HttpServletResponse) getResponse();
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : response.getHeaderNames()) {
            headers.put(name, List.copyOf(response.getHeaders(name)));
        }
        String contentType = response.getContentType();
        if (contentType != null && headers.keySet().stream().noneMatch("Content-Type"::equalsIgnoreCase)) {
            headers.put("Content-Type", List.of(contentType));
        }
        headers.keySet().removeIf("Content-Length"::equalsIgnoreCase);
        return Response.of(response.getStatus(), headers, body.toByteArray());
    }

    /** Writes the held-back body to the response, whose status and headers are set already. */
    void copyBodyToResponse() throws IOException {
        if (writer != null) {
            writer.flush();
        }
        HttpServletResponse response = (HttpServletResponse) getResponse();
        byte[] bytes = body.toByteArray();
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
        response.flushBuffer();
    }
}
