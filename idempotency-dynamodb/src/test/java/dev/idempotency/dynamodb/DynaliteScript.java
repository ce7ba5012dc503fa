package dev.idempotency.dynamodb;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs scripts/dynalite.sh with the settings of this build's servers, for a test that stops and starts one. */
final class DynaliteScript {

    private DynaliteScript() {
    }

    static void run(String... args) throws IOException, InterruptedException {
        DynamoDbServers.required("IDEMPOTENCY_DYNALITE_DIR");
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("scripts/dynalite.sh"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("scripts/dynalite.sh not found above " + Path.of("").toAbsolutePath());
        }
        List<String> command = new ArrayList<>(List.of("bash", dir.resolve("scripts/dynalite.sh").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("scripts/dynalite.sh " + String.join(" ", args) + " failed with exit status " + p.exitValue());
        }
    }
}
