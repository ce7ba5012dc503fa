package dev.idempotency.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP proxy on 127.0.0.1 between the clients and a database server, that can sever every
 * connection at once ({@link #severAll()}), or the connection that carries the next {@code COMMIT}
 * ({@link #cutAtCommit}): before the server has it (the transaction rolls back) or right after it
 * has been passed on (the server commits, and the client never hears so). Both leave the client with
 * an exception from {@code commit()} and no way to tell which happened.
 *
 * <p>The {@code COMMIT} is recognised as the bytes {@code COMMIT} in what the client sends: the
 * PostgreSQL and MariaDB drivers both send the statement as text, and the workload's own values never
 * hold that word. Thread-safe.
 */
final class TcpProxy implements AutoCloseable {

    /** What to do with the next {@code COMMIT} a client sends. */
    enum CommitCut {
        /** Cut the connection before the server receives the {@code COMMIT}: nothing commits. */
        BEFORE_SENDING,
        /** Pass the {@code COMMIT} on, then cut the connection before its answer returns: it commits. */
        AFTER_SENDING
    }

    private static final byte[] COMMIT = "COMMIT".getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicReference<CommitCut> commitCut = new AtomicReference<>();
    private final Thread acceptor;

    TcpProxy(String targetHost, int targetPort) throws IOException {
        this.target = new InetSocketAddress(targetHost, targetPort);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Cuts every open connection now. */
    void severAll() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }

    /** Arms a cut for the next {@code COMMIT} that passes through. */
    void cutAtCommit(CommitCut how) {
        commitCut.set(how);
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException closed) {
                return;
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(target, 5_000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            for (Socket s : new Socket[] {client, upstream}) {
                try {
                    s.setTcpNoDelay(true);
                } catch (IOException ignored) {
                    // best effort
                }
                sockets.add(s);
            }
            pump(client, upstream, true);
            pump(upstream, client, false);
        }
    }

    private void pump(Socket from, Socket to, boolean fromClient) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            byte[] tail = new byte[0];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    CommitCut cut = fromClient ? commitCut.get() : null;
                    if (cut != null) {
                        byte[] seen = concat(tail, buffer, n);
                        if (indexOf(seen, COMMIT) >= 0 && commitCut.compareAndSet(cut, null)) {
                            closeQuietly(from); // first: the server's answer must not reach the client
                            if (cut == CommitCut.AFTER_SENDING) {
                                out.write(buffer, 0, n);
                                out.flush();
                            }
                            closeQuietly(to);
                            return;
                        }
                        tail = Arrays.copyOfRange(seen, Math.max(0, seen.length - COMMIT.length), seen.length);
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException ended) {
                // one side closed, or the connection was cut
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static byte[] concat(byte[] tail, byte[] buffer, int n) {
        byte[] all = Arrays.copyOf(tail, tail.length + n);
        System.arraycopy(buffer, 0, all, tail.length, n);
        return all;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        severAll();
    }
}
