package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No two public top-level types of the published source share a simple name: with two modules on
 * the class path, an IDE's completion and a reader's import never have to choose between two
 * {@code Idempotent}s.
 */
class PublicTypeNamesTest {

    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public\\s+(?:(?:final|abstract|sealed|non-sealed|static)\\s+)*(?:class|interface|enum|record|@interface)\\s+(\\w+)",
            Pattern.MULTILINE);

    @Test
    void noTwoPublicTypesShareAName() throws IOException {
        Path root = DocsSnippetsTest.projectRoot();
        Map<String, List<Path>> byName = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(PublicTypeNamesTest::isMainSource).collect(Collectors.toList())) {
                Matcher m = PUBLIC_TYPE.matcher(Files.readString(file));
                if (m.find()) {
                    byName.computeIfAbsent(m.group(1), name -> new java.util.ArrayList<>()).add(root.relativize(file));
                }
            }
        }
        assertThat(byName).as("the public types found").containsKeys("Idempotent", "IdempotentEndpoint", "IdempotencyKey");
        Map<String, List<Path>> shared = byName.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        assertThat(shared).as("public types that share a simple name").isEmpty();
    }

    private static boolean isMainSource(Path file) {
        String path = file.toString().replace('\\', '/');
        return path.endsWith(".java") && path.contains("/src/main/java/") && !path.contains("/target/")
                && !path.endsWith("package-info.java") && !path.endsWith("module-info.java");
    }
}
