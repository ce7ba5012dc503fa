package dev.idempotency.examples.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Keeps {@code docs/writing-a-store.md} in step with the compiled example: every tagged region of
 * the example's sources must appear in the page exactly.
 */
class WritingAStoreDocTest {

    private static final Path DOC = Path.of("..", "docs", "writing-a-store.md");
    private static final Path MAIN = Path.of("src", "main", "java", "dev", "idempotency", "examples", "store");
    private static final Path TEST = Path.of("src", "test", "java", "dev", "idempotency", "examples", "store");

    @Test
    void theDocQuotesTheCompiledExample() throws IOException {
        String doc = Files.readString(DOC);
        assertRegionQuoted(doc, TEST.resolve("ChargeKeyStoreContractTest.java"), "contract-test");
        assertRegionQuoted(doc, MAIN.resolve("ChargeKeyStore.java"), "table");
        assertRegionQuoted(doc, MAIN.resolve("ChargeKeyStore.java"), "claim");
        assertRegionQuoted(doc, MAIN.resolve("ChargeKeyStore.java"), "purge");
    }

    private static void assertRegionQuoted(String doc, Path source, String tag) throws IOException {
        String region = region(source, tag);
        assertThat(region).as("region " + tag + " of " + source).isNotBlank();
        assertThat(doc).as("docs/writing-a-store.md must quote region '" + tag + "' of " + source.getFileName()
                + " exactly; copy it again from the source").contains(region);
    }

    /** The lines between the tag's markers, with their common indentation removed. */
    static String region(Path source, String tag) throws IOException {
        List<String> lines = new ArrayList<>();
        boolean in = false;
        for (String line : Files.readAllLines(source)) {
            if (line.strip().equals("// tag::" + tag + "[]")) {
                in = true;
            } else if (line.strip().equals("// end::" + tag + "[]")) {
                in = false;
            } else if (in) {
                lines.add(line);
            }
        }
        int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        StringBuilder s = new StringBuilder();
        for (String line : lines) {
            s.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return s.toString();
    }
}
