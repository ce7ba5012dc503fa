package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Each module descriptor of the build names its module as the POM's {@code idempotency.module.name}
 * (the name the manifest, the release page and users' {@code requires} use), and exports no
 * {@code internal} package to everyone: a module of ours that needs another's internals gets a
 * qualified export. The module-path run of {@code idempotency-jpms-test} checks the same of the
 * packaged jars it loads.
 */
class ModuleDescriptorsTest {

    private static final Pattern MODULE = Pattern.compile("^module\\s+([\\w.]+)\\s*\\{", Pattern.MULTILINE);
    private static final Pattern MODULE_NAME = Pattern.compile("<idempotency.module.name>([^<]+)</idempotency.module.name>");
    private static final Pattern INTERNAL_EXPORT = Pattern.compile("^\\s*exports\\s+[\\w.]*\\binternal\\s*;", Pattern.MULTILINE);

    @Test
    void everyDescriptorIsNamedAsItsPomSaysAndExportsNothingInternal() throws IOException {
        Path root = DocsSnippetsTest.projectRoot();
        List<Path> descriptors = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(root)) {
            dirs.map(dir -> dir.resolve("src/main/java/module-info.java")).filter(Files::exists).forEach(descriptors::add);
        }
        assertThat(descriptors).as("the module descriptors found").isNotEmpty();
        for (Path descriptor : descriptors) {
            Path module = descriptor.getParent().getParent().getParent().getParent();
            if (module.getFileName().toString().equals("idempotency-jpms-test")) {
                continue; // a user's module, not one of the library's
            }
            String source = Files.readString(descriptor);
            Matcher name = MODULE.matcher(source);
            Matcher pomName = MODULE_NAME.matcher(Files.readString(module.resolve("pom.xml")));
            assertThat(name.find()).as("%s declares a module", root.relativize(descriptor)).isTrue();
            assertThat(pomName.find()).as("%s/pom.xml sets idempotency.module.name", module.getFileName()).isTrue();
            assertThat(name.group(1)).as("the module name of %s", root.relativize(descriptor)).isEqualTo(pomName.group(1));
            assertThat(INTERNAL_EXPORT.matcher(source).find())
                    .as("%s exports an internal package to every module", root.relativize(descriptor)).isFalse();
        }
    }
}
