package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the documentation's relative links whole: every link of README.md, CHANGELOG.md and docs/ that is not an
 * absolute URL must name a file that exists, and an anchor ({@code page.md#section}, or
 * {@code #section} on the same page) must be a heading of that page, by GitHub's rules for anchors.
 */
class DocsLinksTest {

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a (?:id|name)=\"([^\"]+)\"");

    @Test
    void everyRelativeLinkAndAnchorResolves() throws IOException {
        Path root = DocsSnippetsTest.projectRoot();
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path doc : docs(root)) {
            for (String target : links(Files.readString(doc))) {
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // https:, mailto: ...: not this test's to check
                }
                checked++;
                String problem = problem(doc, target);
                if (problem != null) {
                    broken.add(root.relativize(doc) + ": " + target + " (" + problem + ")");
                }
            }
        }
        assertThat(broken).as("broken relative links").isEmpty();
        assertThat(checked).as("relative links checked").isGreaterThan(100);
    }

    @Test
    void anchorsFollowGitHubsRules() {
        assertThat(anchors("# Spring MVC: `@IdempotentEndpoint`\n## Spring MVC: `@IdempotentEndpoint`\n"))
                .containsExactlyInAnyOrder("spring-mvc-idempotentendpoint", "spring-mvc-idempotentendpoint-1");
        assertThat(anchors("### On a quiet machine, after every change (the figures)\n```\n# not a heading\n```\n"))
                .containsExactly("on-a-quiet-machine-after-every-change-the-figures");
        assertThat(anchors("## 3.8 Write-last mode: work first, record last\n"))
                .containsExactly("38-write-last-mode-work-first-record-last");
    }

    @Test
    void aBrokenLinkIsFound() throws IOException {
        Path root = DocsSnippetsTest.projectRoot();
        Path readme = root.resolve("README.md");
        assertThat(problem(readme, "docs/contract.md#no-such-section")).contains("no heading");
        assertThat(problem(readme, "docs/no-such-page.md")).contains("no such file");
        assertThat(problem(readme, "docs/contract.md#5-outcomes")).isNull();
    }

    private static List<Path> docs(Path root) throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        docs.add(root.resolve("CHANGELOG.md"));
        try (Stream<Path> files = Files.walk(root.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** @return a description of what is wrong with the link, or {@code null} if it resolves */
    private static String problem(Path doc, String target) throws IOException {
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path page = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        if (!Files.exists(page)) {
            return "no such file";
        }
        if (hash < 0 || !page.toString().endsWith(".md")) {
            return null;
        }
        String anchor = target.substring(hash + 1);
        return anchors(Files.readString(page)).contains(anchor) ? null : "no heading with that anchor";
    }

    /** @return the link targets of a page, outside fenced code blocks and inline code */
    private static List<String> links(String page) {
        List<String> targets = new ArrayList<>();
        for (String line : outsideCode(page)) {
            Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
            while (m.find()) {
                targets.add(m.group(1));
            }
        }
        return targets;
    }

    /** @return the anchors GitHub gives a page's headings (and its explicit {@code <a id>} anchors) */
    static Set<String> anchors(String page) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : outsideCode(page)) {
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = heading.group(1).toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "")
                        .replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return anchors;
    }

    /** @return the lines of a page outside its fenced code blocks */
    private static List<String> outsideCode(String page) {
        List<String> lines = new ArrayList<>();
        boolean fenced = false;
        for (String line : page.split("\n", -1)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
            } else if (!fenced) {
                lines.add(line);
            }
        }
        return lines;
    }
}
