package dev.idempotency.examples.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.JobProgress;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The example in this JVM: the file, the import with its progress, and a rerun that executes nothing. */
class PaymentImportJobTest {

    @Test
    void importsEveryInstructionOnceAndARerunExecutesNothing(@TempDir Path dir) throws Exception {
        PaymentImportJob.Options options = PaymentImportJob.Options.parse("--instructions", "2000", "--chunk", "100",
                "--dir", dir.toString());
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        JobProgress done = PaymentImportJob.run(options, new PrintStream(first, true, StandardCharsets.UTF_8), false);

        int invalid = InstructionFile.invalidIn(2000);
        assertThat(invalid).isEqualTo(2);
        assertThat(done.executed()).isEqualTo(2000 - invalid);
        assertThat(done.failed()).isEqualTo(invalid);
        assertThat(first.toString(StandardCharsets.UTF_8)).contains("100% 2,000/2,000", "executed 1,998", "failed 2",
                "Done: 1,998 executed, 0 replayed, 2 failed, 0 skipped", "ledger rows: 1,998");

        ByteArrayOutputStream second = new ByteArrayOutputStream();
        JobProgress rerun = PaymentImportJob.run(options, new PrintStream(second, true, StandardCharsets.UTF_8), false);
        assertThat(rerun.nothingExecuted()).isTrue();
        assertThat(rerun.replayed()).isEqualTo(2000 - invalid);
        assertThat(second.toString(StandardCharsets.UTF_8))
                .contains("Nothing executed: all 2,000 instructions were recorded by an earlier run", "ledger rows: 1,998");
    }

    @Test
    void theFileIsTheSameEveryTime(@TempDir Path a, @TempDir Path b) throws Exception {
        Path one = InstructionFile.ensure(a, 3000);
        Path two = InstructionFile.ensure(b, 3000);
        assertThat(Files.readAllBytes(one)).isEqualTo(Files.readAllBytes(two));
        assertThat(InstructionFile.count(one)).isEqualTo(3000);
        assertThat(Files.list(a)).containsExactly(one);
    }

    @Test
    void theProgressLineShowsCountsRateAndTimeLeft() {
        String line = ProgressBar.line(new JobProgress(10, 4_000, 900, 100, 0, 10_000, Duration.ofSeconds(2)));
        assertThat(line).isEqualTo("[###############...............]  50% 5,000/10,000  executed 4,000  replayed 900  failed 100"
                + "  2,500 items/s  2 s left");

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProgressBar inPlace = new ProgressBar(new PrintStream(out, true, StandardCharsets.UTF_8), true, 5);
        inPlace.accept(new JobProgress(1, 500, 0, 0, 0, 1_000, Duration.ofSeconds(1)));
        inPlace.accept(new JobProgress(2, 1_000, 0, 0, 0, 1_000, Duration.ofSeconds(2)));
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("\r[").contains("\r[##############################] 100%")
                .endsWith(System.lineSeparator());
    }
}
