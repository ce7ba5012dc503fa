package dev.idempotency.examples.batch;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * The import file: CSV, one {@link PaymentInstruction} a line after a header. Generated when
 * missing, always the same for the same count (a fixed seed), and written under a temporary name
 * then renamed, so that a process killed while writing it leaves no half file behind.
 */
final class InstructionFile {

    /** Every instruction at a multiple of this (less one) has a zero amount, which the ledger rejects. */
    static final int INVALID_EVERY = 1000;

    private InstructionFile() {
    }

    /**
     * @param dir the folder
     * @param count how many instructions
     * @return the file of {@code count} instructions in {@code dir}, generated if it is missing
     * @throws IOException if it cannot be written
     */
    static Path ensure(Path dir, int count) throws IOException {
        Path file = dir.resolve("instructions-" + count + ".csv");
        if (Files.exists(file)) {
            return file;
        }
        Files.createDirectories(dir);
        Path partial = dir.resolve(file.getFileName() + ".partial");
        SplittableRandom random = new SplittableRandom(20_260_329L);
        try (BufferedWriter w = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
            w.write(PaymentInstruction.HEADER);
            w.newLine();
            for (int i = 1; i <= count; i++) {
                int debtor = random.nextInt(1, 5_001);
                int creditor = 1 + (debtor + random.nextInt(1, 5_000) - 1) % 5_000; // never the debtor
                long cents = i % INVALID_EVERY == INVALID_EVERY - 1 ? 0 : random.nextLong(1, 500_001);
                w.write(new PaymentInstruction(String.format("PI-%08d", i), account(debtor), account(creditor), cents, "EUR").toCsv());
                w.newLine();
            }
        }
        Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return file;
    }

    private static String account(int n) {
        return String.format("ACC-%05d", n);
    }

    /**
     * @param count instructions in a generated file
     * @return how many of them the ledger rejects
     */
    static int invalidIn(int count) {
        return (count + 1) / INVALID_EVERY;
    }

    /**
     * @param file a file written by {@link #ensure}
     * @return its instructions, in order; close the stream
     * @throws IOException if it cannot be read
     */
    static Stream<PaymentInstruction> read(Path file) throws IOException {
        Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8);
        return lines.skip(1).filter(line -> !line.isBlank()).map(PaymentInstruction::parse).onClose(lines::close);
    }

    /**
     * @param file a file written by {@link #ensure}
     * @return the number of instructions in it
     */
    static long count(Path file) {
        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.skip(1).filter(line -> !line.isBlank()).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
