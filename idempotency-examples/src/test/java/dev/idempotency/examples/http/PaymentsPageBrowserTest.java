package dev.idempotency.examples.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idempotency.testsupport.Json;
import dev.idempotency.testsupport.TestEnvironment;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The page of {@code --serve} in a real headless Chromium, driven over the Chrome DevTools Protocol:
 * a slow payment, the page reloaded while it is pending, and then the server's counts. The page's
 * script sends the pending payment again after the reload, with the key it kept in
 * {@code localStorage}: the protected endpoint charges once, the unprotected one twice.
 *
 * <p>It needs {@code IDEMPOTENCY_CHROMIUM} ({@code scripts/chromium.sh install} prints it;
 * {@code scripts/test} sets it): without it the test is skipped, under CI it fails. With
 * {@code -Didempotency.screenshot=true} it saves the page as {@code docs/images/payments-page.png}.
 */
class PaymentsPageBrowserTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Test
    void aReloadDuringASlowPaymentSendsItAgainAndOnlyTheProtectedSideChargesOnce(@TempDir Path dir) throws Exception {
        String chromium = TestEnvironment.require("IDEMPOTENCY_CHROMIUM", "install the browser with scripts/chromium.sh install"
                + " and export the line it prints (scripts/test does both)");
        if (!Files.isExecutable(Path.of(chromium))) {
            fail("IDEMPOTENCY_CHROMIUM names " + chromium + ", which is not an executable file: run scripts/chromium.sh install");
        }
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:file:" + dir.resolve("payments") + ";WRITE_DELAY=0;LOCK_TIMEOUT=10000");
        PaymentsApi.createTables(dataSource);

        try (PaymentsApi api = new PaymentsApi(dataSource, 0, PaymentsApi.Fault.NONE, 2, Duration.ofSeconds(1));
                Browser browser = Browser.launch(chromium);
                Cdp page = browser.page()) {
            page.call("Page.navigate", Map.of("url", api.uri() + "/"));
            await("the page has loaded", () -> "idle".equals(page.evaluateOrNull("document.body.dataset.state")));

            page.evaluate("document.getElementById('slow').checked = true; document.getElementById('pay').requestSubmit(); true");
            await("both requests reached the server", () -> api.requests("/payments") == 1 && api.requests("/unprotected/payments") == 1);
            assertThat(page.evaluate("localStorage.getItem('idempotency-demo.pending') !== null"))
                    .as("the payment is pending when the page is reloaded (the server takes 2 s)").isEqualTo(true);
            page.call("Page.reload", Map.of());

            await("the page sent the pending payment again and has its answers", () -> Boolean.TRUE.equals(page.evaluateOrNull(
                    "document.body.dataset.state === 'idle' && localStorage.getItem('idempotency-demo.pending') === null")));
            await("the server answered every request", () -> api.requests("/payments") == 2 && api.requests("/unprotected/payments") == 2);
            // The first unprotected request, cut off by the reload, commits on its own; its answer goes nowhere.
            await("the server committed the unprotected request cut off by the reload",
                    () -> committed(api, "/unprotected/payments") >= 2);
            await("the page shows the server's counts", () -> charges(api).equals(page.evaluateOrNull(
                    "document.querySelector('#unprotected .charges').textContent + '/'"
                            + " + document.querySelector('#protected .charges').textContent")));

            assertThat(api.payments("/payments")).as("protected: the same key after the reload, one charge").isEqualTo(1);
            assertThat(api.payments("/unprotected/payments")).as("unprotected: the payment sent again is charged again").isEqualTo(2);
            // Replayed when the first attempt took the key before the retry came; else the retry ran it and the first got the replay.
            assertThat(page.evaluate("[...document.querySelectorAll('#protected .ids li')].map(li => li.textContent).join()"))
                    .as("the protected side answered the page once, after the reload, with the one payment").asString()
                    .matches("[0-9a-f-]{36}( \\(replayed\\))?");

            if (Boolean.getBoolean("idempotency.screenshot")) {
                Map<?, ?> shot = page.call("Page.captureScreenshot", Map.of("format", "png"));
                Path module = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
                Path png = module.getParent().resolve("docs/images/payments-page.png");
                Files.createDirectories(png.getParent());
                Files.write(png, Base64.getDecoder().decode((String) shot.get("data")));
            }
        }
    }

    /** The payments committed, unprotected then protected, as the page shows them. */
    private static String charges(PaymentsApi api) {
        return committed(api, "/unprotected/payments") + "/" + committed(api, "/payments");
    }

    private static long committed(PaymentsApi api, String endpoint) {
        try {
            return api.payments(endpoint);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Polls {@code condition} until it holds; fails after the deadline. A condition that throws counts as not holding yet. */
    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Instant end = Instant.now().plus(DEADLINE);
        RuntimeException last = null;
        while (Instant.now().isBefore(end)) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("not within " + DEADLINE.toSeconds() + " s: " + what, last);
    }

    /** Chromium, headless, in a fresh user data folder; closing it kills it and deletes the folder. */
    private static final class Browser implements AutoCloseable {
        private final Process process;
        private final Path userData;
        private final int port;

        private Browser(Process process, Path userData, int port) {
            this.process = process;
            this.userData = userData;
            this.port = port;
        }

        static Browser launch(String chromium) throws Exception {
            Path userData = Files.createTempDirectory("payments-page-chromium");
            Process process = null;
            try {
                process = new ProcessBuilder(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + userData, "--remote-debugging-port=0", "--window-size=1200,820", "about:blank")
                        .redirectErrorStream(true)
                        .redirectOutput(userData.resolve("chromium.log").toFile())
                        .start();
                Path portFile = userData.resolve("DevToolsActivePort");
                Process started = process;
                await("Chromium wrote " + portFile.getFileName(), () -> {
                    if (!started.isAlive()) {
                        throw new IllegalStateException("Chromium exited with " + started.exitValue() + ": " + log(userData));
                    }
                    return Files.isRegularFile(portFile) && readLines(portFile).size() >= 2;
                });
                return new Browser(process, userData, Integer.parseInt(readLines(portFile).get(0).strip()));
            } catch (Exception | AssertionError e) {
                new Browser(process, userData, 0).close();
                throw e;
            }
        }

        /** @return a connection to the page that Chromium opened with {@code about:blank} */
        Cdp page() throws Exception {
            URI targets = URI.create("http://127.0.0.1:" + port + "/json/list");
            HttpResponse<String> list = HttpClient.newHttpClient().send(HttpRequest.newBuilder(targets).build(),
                    HttpResponse.BodyHandlers.ofString());
            for (Object target : (List<?>) Json.parse(list.body())) {
                Map<?, ?> t = (Map<?, ?>) target;
                if ("page".equals(t.get("type"))) {
                    return Cdp.connect(URI.create((String) t.get("webSocketDebuggerUrl")));
                }
            }
            throw new IllegalStateException("no page among Chromium's targets: " + list.body());
        }

        @Override
        public void close() throws IOException, InterruptedException {
            if (process != null) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
            try (Stream<Path> files = Files.walk(userData)) {
                for (Path file : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                    Files.deleteIfExists(file);
                }
            }
        }

        private static List<String> readLines(Path file) {
            try {
                return Files.readAllLines(file);
            } catch (IOException e) {
                return List.of();
            }
        }

        private static String log(Path userData) {
            return String.join("\n", readLines(userData.resolve("chromium.log")));
        }
    }

    /** One DevTools connection: commands and their results; events are ignored. */
    private static final class Cdp implements WebSocket.Listener, AutoCloseable {
        private final AtomicInteger ids = new AtomicInteger();
        private final Map<Integer, CompletableFuture<Map<?, ?>>> calls = new ConcurrentHashMap<>();
        private final StringBuilder message = new StringBuilder();
        private WebSocket socket;

        static Cdp connect(URI uri) {
            Cdp cdp = new Cdp();
            cdp.socket = HttpClient.newHttpClient().newWebSocketBuilder().buildAsync(uri, cdp).join();
            return cdp;
        }

        /** Sends a command and waits for its result. */
        Map<?, ?> call(String method, Map<String, ?> params) {
            int id = ids.incrementAndGet();
            CompletableFuture<Map<?, ?>> result = new CompletableFuture<>();
            calls.put(id, result);
            Map<String, Object> command = new LinkedHashMap<>();
            command.put("id", id);
            command.put("method", method);
            command.put("params", params);
            socket.sendText(Json.write(command), true).join();
            try {
                return result.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(method + " failed", e);
            } finally {
                calls.remove(id);
            }
        }

        /** Evaluates a JavaScript expression in the page and returns its value. */
        Object evaluate(String expression) {
            Map<?, ?> answer = call("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
            if (answer.get("exceptionDetails") != null) {
                throw new IllegalStateException("the page threw: " + Json.write(answer.get("exceptionDetails")));
            }
            return ((Map<?, ?>) answer.get("result")).get("value");
        }

        /** {@link #evaluate}, with {@code null} while the page is between two documents (a reload). */
        Object evaluateOrNull(String expression) {
            try {
                return evaluate(expression);
            } catch (IllegalStateException e) {
                return null;
            }
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            message.append(data);
            if (last) {
                Map<?, ?> received = (Map<?, ?>) Json.parse(message.toString());
                message.setLength(0);
                if (received.get("id") instanceof Number id) {
                    CompletableFuture<Map<?, ?>> call = calls.get(id.intValue());
                    if (call != null) {
                        if (received.get("error") != null) {
                            call.completeExceptionally(new IllegalStateException(Json.write(received.get("error"))));
                        } else {
                            call.complete((Map<?, ?>) received.get("result"));
                        }
                    }
                }
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            calls.values().forEach(call -> call.completeExceptionally(error));
        }

        @Override
        public void close() {
            socket.abort();
        }
    }
}
