package dev.idempotency.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The service outside the database that lease mode calls (a payment provider, say), kept in a
 * folder of files so that it outlives the killed clients and shares nothing with the database's
 * transactions. Like such a provider, it deduplicates on the idempotency key it is sent (the
 * attempt's downstream key): the first call with a downstream key makes the effect, and every later
 * call with it gets that effect's answer back without making another.
 *
 * <p>Each effect is one file named after its downstream key, holding the operation's key and the
 * answer. It is written whole to a file of its own, forced to the disk, then linked to its name:
 * {@code link} is atomic and fails if the name exists, so exactly one call per downstream key makes
 * the effect, across processes, and a call killed halfway leaves at most a stray temporary file,
 * never a half-written effect.
 *
 * <p>Thread-safe, and safe across processes on one folder.
 */
final class ExternalEffects {

    private static final String TEMPORARY = "tmp-";
    private static final String EFFECT = ".effect";

    private final Path dir;

    ExternalEffects(Path dir) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("could not create the external effects' folder " + dir, e);
        }
    }

    /**
     * The call: makes the effect of {@code key} under {@code downstreamKey}, or answers the effect made
     * before under it.
     *
     * @param key the operation's key (recorded to count the effects per operation; the service does not deduplicate on it)
     * @param downstreamKey the idempotency key sent to the service
     * @param answer the answer if the effect is made now
     * @return the answer of the effect of {@code downstreamKey}: {@code answer} if made now, the first one's otherwise
     */
    String call(String key, String downstreamKey, String answer) {
        Path effect = dir.resolve(downstreamKey + EFFECT);
        if (Files.exists(effect)) {
            return read(effect)[1];
        }
        Path temporary = dir.resolve(TEMPORARY + UUID.randomUUID());
        try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer bytes = ByteBuffer.wrap((key + "\t" + answer + "\n").getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                out.write(bytes);
            }
            out.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the effect " + temporary, e);
        }
        try {
            Files.createLink(effect, temporary);
            return answer;
        } catch (FileAlreadyExistsException made) {
            return read(effect)[1];
        } catch (IOException e) {
            throw new UncheckedIOException("could not make the effect " + effect, e);
        } finally {
            try {
                Files.delete(temporary);
            } catch (IOException ignored) {
                // a stray temporary file is never read as an effect
            }
        }
    }

    /** @return for each operation's key, the answers of the effects really made for it (one per downstream key it was sent with) */
    Map<String, List<String>> made() {
        Map<String, List<String>> made = new HashMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(EFFECT)).sorted().toList()) {
                String[] effect = read(file);
                made.computeIfAbsent(effect[0], k -> new ArrayList<>()).add(effect[1]);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not list the external effects in " + dir, e);
        }
        return made;
    }

    private static String[] read(Path effect) {
        try {
            String[] fields = Files.readString(effect, StandardCharsets.UTF_8).strip().split("\t", -1);
            if (fields.length != 2) {
                throw new IllegalStateException("not an effect: " + effect);
            }
            return fields;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the effect " + effect, e);
        }
    }
}
