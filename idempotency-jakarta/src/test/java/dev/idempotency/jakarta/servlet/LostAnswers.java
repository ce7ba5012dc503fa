package dev.idempotency.jakarta.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;

/**
 * A servlet filter for the tests' Jetty servers, mapped before everything else: sets a header, as
 * an earlier filter would, and loses answers after the commit, closing the connection instead of
 * answering: every {@link #loseEvery}th answer of a scope ({@code X-Client}) that starts with
 * {@code lossy-}, or those of {@link #losses}.
 */
public final class LostAnswers implements Filter {

    /** Answers to lose per {@code scope/key}, after the commit. */
    public final Map<String, AtomicInteger> losses = new ConcurrentHashMap<>();
    /** With N above 0, every Nth answer of a scope that starts with {@code lossy-} is lost. */
    public volatile int loseEvery;
    private final AtomicInteger answered = new AtomicInteger();

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        CapturedResponse held = new CapturedResponse((HttpServletResponse) res);
        held.setHeader("X-Earlier-Filter", "kept"); // as a CORS or security filter would
        chain.doFilter(request, held);
        if (lose(request)) {
            ServletContextRequest.getServletContextRequest(request).getConnectionMetaData().getConnection().getEndPoint().close();
            return;
        }
        held.copyBodyToResponse();
    }

    private boolean lose(HttpServletRequest request) {
        if (!"POST".equals(request.getMethod())) {
            return false;
        }
        String scope = String.valueOf(request.getHeader("X-Client"));
        AtomicInteger left = losses.get(scope + "/" + request.getHeader("Idempotency-Key"));
        if (left != null && left.getAndDecrement() > 0) {
            return true;
        }
        int every = loseEvery;
        return every > 0 && scope.startsWith("lossy-") && answered.incrementAndGet() % every == 0;
    }
}
