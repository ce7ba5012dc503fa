package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The build's modules are the one list, and every other list follows it: the BOM names exactly the
 * published modules (a module is published unless its POM sets {@code maven.deploy.skip}), the
 * README's module table names every module, and the release page's table says of each whether it
 * is published, as its POM does.
 */
class ModulesListedTest {

    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern ARTIFACT = Pattern.compile("<artifactId>(idempotency-[^<]+)</artifactId>");
    private static final Pattern TABLE_ROW = Pattern.compile("^\\| `(idempotency-[a-z0-9-]+)` \\|(.*)$", Pattern.MULTILINE);

    private static Path root;
    /** Every module of the build, and whether it is published. */
    private static Map<String, Boolean> modules;

    @BeforeAll
    static void readTheBuild() throws IOException {
        root = DocsSnippetsTest.projectRoot();
        modules = new LinkedHashMap<>();
        Matcher m = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            String pom = Files.readString(root.resolve(m.group(1)).resolve("pom.xml"));
            modules.put(m.group(1), !pom.contains("<maven.deploy.skip>true</maven.deploy.skip>"));
        }
        assertThat(modules).as("the root POM's modules").containsKeys("idempotency-core", "idempotency-bom");
    }

    private static Set<String> published() {
        return modules.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey)
                .filter(name -> !name.equals("idempotency-bom")).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void theBomNamesExactlyThePublishedModules() throws IOException {
        String bom = Files.readString(root.resolve("idempotency-bom/pom.xml"));
        String managed = bom.substring(bom.indexOf("<dependencyManagement>"), bom.indexOf("</dependencyManagement>"));
        Set<String> listed = new TreeSet<>();
        Matcher m = ARTIFACT.matcher(managed);
        while (m.find()) {
            listed.add(m.group(1));
        }
        assertThat(listed).as("the modules idempotency-bom manages").isEqualTo(published());
    }

    @Test
    void theReadmesModuleTableNamesEveryModule() throws IOException {
        String readme = Files.readString(root.resolve("README.md"));
        String table = readme.substring(readme.indexOf("\n## Modules\n"), readme.indexOf("\n## ", readme.indexOf("\n## Modules\n") + 1));
        assertThat(rows(table).keySet()).as("the modules README.md's Modules table names").isEqualTo(new TreeSet<>(modules.keySet()));
    }

    @Test
    void theReleasePageSaysOfEachModuleWhetherItIsPublished() throws IOException {
        String page = Files.readString(root.resolve("docs/releasing.md"));
        String table = page.substring(page.indexOf("## What is published"), page.indexOf("\n## ", page.indexOf("## What is published") + 1));
        Map<String, String> rows = rows(table);
        rows.remove("idempotency-parent");
        assertThat(rows.keySet()).as("the modules docs/releasing.md's table names").isEqualTo(new TreeSet<>(modules.keySet()));
        for (Map.Entry<String, Boolean> module : modules.entrySet()) {
            String published = rows.get(module.getKey()).strip().split("\\|")[0].strip();
            assertThat(published).as("docs/releasing.md on whether %s is published", module.getKey())
                    .isEqualTo(module.getValue() ? "yes" : "no");
        }
    }

    @Test
    void everyPublishedJarNamesItsModuleInItsManifest_andTheReleasePageSaysWhich() throws IOException {
        String page = Files.readString(root.resolve("docs/releasing.md"));
        Map<String, String> rows = rows(page.substring(page.indexOf("## What is published")));
        Pattern name = Pattern.compile("<idempotency.module.name>([^<]+)</idempotency.module.name>");
        for (String module : published()) {
            String pom = Files.readString(root.resolve(module).resolve("pom.xml"));
            Matcher m = name.matcher(pom);
            assertThat(m.find()).as("%s sets idempotency.module.name", module).isTrue();
            assertThat(pom).as("%s writes it to its jar's manifest (the release build checks the jar)", module)
                    .contains("<Automatic-Module-Name>${idempotency.module.name}</Automatic-Module-Name>");
            assertThat(rows.get(module)).as("docs/releasing.md on %s's module name", module).contains("module `" + m.group(1) + "`");
        }
    }

    /** @return the module named by each row of a Markdown table, and the rest of the row */
    private static Map<String, String> rows(String table) {
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m = TABLE_ROW.matcher(table);
        while (m.find()) {
            rows.put(m.group(1), m.group(2));
        }
        return rows;
    }

    @Test
    void theReadingFindsModulesOfBothKinds() {
        // a guard on the reading above: it must find published and unpublished modules both
        assertThat(published()).contains("idempotency-core", "idempotency-jdbc").doesNotContain("idempotency-examples");
        List<String> unpublished = modules.entrySet().stream().filter(e -> !e.getValue()).map(Map.Entry::getKey).toList();
        assertThat(unpublished).contains("idempotency-examples", "idempotency-test-support");
    }
}
