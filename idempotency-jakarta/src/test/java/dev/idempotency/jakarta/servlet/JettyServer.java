package dev.idempotency.jakarta.servlet;

import dev.idempotency.jakarta.testing.AbstractPaymentsTest;
import dev.idempotency.jakarta.testing.AbstractPaymentsTest.Hold;
import jakarta.servlet.DispatcherType;
import java.net.URI;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * What the tests' payments servers on embedded Jetty 12 (ee10) share: a connector on 127.0.0.1,
 * {@link LostAnswers} before every other filter, the handler's runs and holds. A subclass maps its
 * filters and servlets on {@link #context}, then calls {@link #start()}.
 */
public abstract class JettyServer implements AbstractPaymentsTest.PaymentsServer {

    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);
    /** Where a subclass maps its filters and servlets. */
    protected final ServletContextHandler context = new ServletContextHandler();
    /** Runs per {@code scope/key}, rolled-back ones included. */
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final Map<String, Hold> holds = new ConcurrentHashMap<>();
    private final LostAnswers lost = new LostAnswers();

    /** A server on 127.0.0.1, not started, its losing filter mapped first. */
    protected JettyServer() {
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        context.addFilter(new FilterHolder(lost), "/*", EnumSet.of(DispatcherType.REQUEST));
    }

    /** Starts the server with what the subclass mapped. */
    protected final void start() throws Exception {
        server.setHandler(context);
        server.start();
    }

    /** Counts a run of the handler for the scope and key. */
    protected final int ran(String scope, String key) {
        return runs.computeIfAbsent(scope + "/" + key, k -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    @Override
    public int runs(String scope, String key) {
        AtomicInteger n = runs.get(scope + "/" + key);
        return n == null ? 0 : n.get();
    }

    @Override
    public Hold hold(String name) {
        return holds.computeIfAbsent(name, n -> new Hold());
    }

    @Override
    public LostAnswers lost() {
        return lost;
    }

    @Override
    public void close() throws Exception {
        holds.values().forEach(h -> h.release.countDown());
        server.stop();
    }
}
