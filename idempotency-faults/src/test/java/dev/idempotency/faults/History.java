package dev.idempotency.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A client's append-only history file: one {@link HistoryEvent} a line, each written with one
 * {@code write} and forced to the disk before the client goes on, so that what a client was told is
 * on record even if its process is killed the next instant. A line cut short by a kill (no line
 * break) is ignored when read back.
 *
 * <p>Thread-safe: the threads of one client JVM may share one history.
 */
final class History implements AutoCloseable {

    private final FileChannel channel;

    private History(FileChannel channel) {
        this.channel = channel;
    }

    static History append(Path file) {
        try {
            return new History(FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND));
        } catch (IOException e) {
            throw new UncheckedIOException("could not open the history " + file, e);
        }
    }

    synchronized void record(HistoryEvent event) {
        ByteBuffer bytes = ByteBuffer.wrap((event.line() + "\n").getBytes(StandardCharsets.UTF_8));
        try {
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            channel.force(false);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the history", e);
        }
    }

    @Override
    public synchronized void close() throws IOException {
        channel.close();
    }

    /** @return the complete lines of every history file ({@code *.history}) in {@code dir}, file by file */
    static List<HistoryEvent> readAll(Path dir) throws IOException {
        List<HistoryEvent> events = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".history")).sorted().toList()) {
                String text = Files.readString(file, StandardCharsets.UTF_8);
                int end = text.lastIndexOf('\n'); // a last line without its line break was cut by a kill
                if (end < 0) {
                    continue;
                }
                for (String line : text.substring(0, end).split("\n")) {
                    if (!line.isEmpty()) {
                        events.add(HistoryEvent.parse(line));
                    }
                }
            }
        }
        return events;
    }
}
