package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the documentation's code compiled: every Java block in README.md and docs/ that follows a
 * marker {@code <!-- snippet: path/File.java#tag -->} must equal the tagged region
 * ({@code // tag::name[]} ... {@code // end::name[]}) of that source file, indentation removed.
 */
class DocsSnippetsTest {

    private static final Pattern MARKED = Pattern.compile("<!-- snippet: (\\S+)#(\\S+) -->\\s*```java\\n(.*?)```", Pattern.DOTALL);

    @Test
    void everyMarkedSnippetMatchesItsSource() throws IOException {
        Path root = projectRoot();
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.walk(root.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).forEach(docs::add);
        }
        int checked = 0;
        for (Path doc : docs) {
            Matcher m = MARKED.matcher(Files.readString(doc));
            while (m.find()) {
                String expected = region(root.resolve(m.group(1)), m.group(2));
                assertThat(dedent(m.group(3))).as("snippet %s#%s in %s", m.group(1), m.group(2), root.relativize(doc))
                        .isEqualTo(expected);
                checked++;
            }
        }
        assertThat(checked).as("snippets checked").isGreaterThanOrEqualTo(3);
    }

    private static String region(Path source, String tag) throws IOException {
        String text = Files.readString(source);
        int start = text.indexOf("// tag::" + tag + "[]");
        int end = text.indexOf("// end::" + tag + "[]");
        assertThat(start).as("tag %s in %s", tag, source).isNotNegative();
        assertThat(end).as("end of tag %s in %s", tag, source).isGreaterThan(start);
        String body = text.substring(text.indexOf('\n', start) + 1, text.lastIndexOf('\n', end) + 1);
        return dedent(body);
    }

    static String dedent(String block) {
        List<String> lines = block.lines().collect(Collectors.toList());
        int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).collect(Collectors.joining("\n")).strip();
    }

    static Path projectRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("README.md"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("project root with README.md").isNotNull();
        return dir;
    }
}
