package dev.idempotency.examples.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.JobProgress;
import dev.idempotency.JobResult;
import dev.idempotency.Outcome;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The example in this JVM: the file, the import with its progress, and a rerun that executes nothing. */
class PaymentImportJobTest {

    @Test
    void importsEveryInstructionOnceAndARerunExecutesNothing(@TempDir Path dir) throws Exception {
        PaymentImportJob.Options options = PaymentImportJob.Options.parse("--instructions", "2000", "--chunk", "100",
                "--dir", dir.toString());
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        JobResult<Long> result = PaymentImportJob.run(options, new PrintStream(first, true, StandardCharsets.UTF_8), false);
        JobProgress done = result.progress();

        int invalid = InstructionFile.invalidIn(2000);
        assertThat(invalid).isEqualTo(2);
        assertThat(done.executed()).isEqualTo(2000 - invalid);
        assertThat(done.failed()).isEqualTo(invalid);
        assertThat(result.failedItems()).extracting(failed -> failed.key().id()).containsExactly("PI-00000999", "PI-00001999");
        assertThat(result.failedItems()).allSatisfy(failed -> {
            assertThat(failed.errorType()).isEqualTo(Ledger.InvalidInstruction.class.getName());
            assertThat(failed.errorMessage()).isEqualTo("the amount must be positive, was 0");
        });
        assertThat(first.toString(StandardCharsets.UTF_8)).contains("100% 2,000/2,000", "executed 1,998", "failed 2",
                "Done: 1,998 executed, 0 replayed, 2 failed, 0 held, 0 mismatched", "ledger rows: 1,998",
                "Failed: 2 instructions", "deliberately invalid", "PI-00000999: the amount must be positive, was 0");

        ByteArrayOutputStream second = new ByteArrayOutputStream();
        JobResult<Long> again = PaymentImportJob.run(options, new PrintStream(second, true, StandardCharsets.UTF_8), false);
        JobProgress rerun = again.progress();
        assertThat(rerun.nothingExecuted()).isTrue();
        assertThat(rerun.replayed()).isEqualTo(2000 - invalid);
        assertThat(again.failedItems()).extracting(failed -> failed.key().id()).containsExactly("PI-00000999", "PI-00001999");
        assertThat(again.failedItems()).allMatch(Outcome.Failed::replayed);
        assertThat(second.toString(StandardCharsets.UTF_8))
                .contains("Nothing executed: all 2,000 instructions were recorded by an earlier run", "ledger rows: 1,998",
                        "PI-00001999: the amount must be positive, was 0");
    }

    @Test
    void anInstructionChangedInTheFileSinceItWasBookedIsReportedAsMismatchedByItsId(@TempDir Path dir) throws Exception {
        PaymentImportJob.Options options = PaymentImportJob.Options.parse("--instructions", "200", "--chunk", "50",
                "--dir", dir.toString());
        PaymentImportJob.run(options, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), false);
        Path file = InstructionFile.ensure(dir, 200);
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        PaymentInstruction third = PaymentInstruction.parse(lines.get(3));
        lines.set(3, new PaymentInstruction(third.id(), third.debtor(), third.creditor(), third.amountCents() + 1, third.currency()).toCsv());
        Files.write(file, lines, StandardCharsets.UTF_8);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        JobResult<Long> changed = PaymentImportJob.run(options, new PrintStream(out, true, StandardCharsets.UTF_8), false);
        assertThat(changed.progress().mismatched()).isEqualTo(1);
        assertThat(changed.progress().executed()).isZero();
        assertThat(changed.mismatchedItems()).extracting(mismatch -> mismatch.key().id()).containsExactly("PI-00000003");
        assertThat(changed.heldItems()).isEmpty();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("1 mismatched", "Mismatched: 1 instruction", "PI-00000003");
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
        String line = ProgressBar.line(new JobProgress(10, 4_000, 900, 100, 0, 0, 10_000, Duration.ofSeconds(2)));
        assertThat(line).isEqualTo("[###############...............]  50% 5,000/10,000  executed 4,000  replayed 900  failed 100"
                + "  2,500 items/s  2 s left");
        assertThat(ProgressBar.line(new JobProgress(10, 4_000, 900, 97, 2, 1, 10_000, Duration.ofSeconds(2))))
                .contains("failed 97  held 2  mismatched 1  2,500 items/s");

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProgressBar inPlace = new ProgressBar(new PrintStream(out, true, StandardCharsets.UTF_8), true, 5);
        inPlace.accept(new JobProgress(1, 500, 0, 0, 0, 0, 1_000, Duration.ofSeconds(1)));
        inPlace.accept(new JobProgress(2, 1_000, 0, 0, 0, 0, 1_000, Duration.ofSeconds(2)));
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("\r[").contains("\r[##############################] 100%")
                .endsWith(System.lineSeparator());
    }
}
