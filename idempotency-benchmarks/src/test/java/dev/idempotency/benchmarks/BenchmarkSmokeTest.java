package dev.idempotency.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs every benchmark once, briefly, on H2 in memory, in this JVM, then the counting pass and the
 * report: proves in every build that the benchmarks, the counting and the report work, without
 * the full run.
 */
class BenchmarkSmokeTest {

    @Test
    void everyBenchmarkRunsOnceAndTheReportReadsTheResults(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("results.json");
        // JMH refuses to start while another JMH run on the machine holds its lock file; a smoke run
        // measures nothing, so it must not fail a build because a benchmark runs beside it.
        System.setProperty("jmh.ignoreLock", "true");
        Options options = new OptionsBuilder()
                .include(BenchmarkSmokeTest.class.getPackageName() + "\\.")
                .param("db", "h2mem")
                .param("recorded", "20")
                .param("rows", "2000")
                .param("batch", "500")
                .param("items", "1000")
                .param("chunk", "250")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(100))
                .shouldFailOnError(true)
                .resultFormat(ResultFormatType.JSON)
                .result(json.toString())
                .output(dir.resolve("jmh.log").toString())
                .build();

        Collection<RunResult> results = new Runner(options).run();

        List<String> names = new ArrayList<>();
        for (RunResult r : results) {
            names.add(r.getParams().getBenchmark().replace(BenchmarkSmokeTest.class.getPackageName() + ".", ""));
            assertThat(r.getPrimaryResult().getScore()).as(r.getParams().getBenchmark()).isPositive();
        }
        assertThat(names).containsExactlyInAnyOrder(
                "TransactionBenchmark.baseline", "TransactionBenchmark.firstExecution", "TransactionBenchmark.replay",
                "TransactionBenchmark.managedFirstExecution", "TransactionBenchmark.managedReplay",
                "TransactionBenchmark.reservationBaseline", "TransactionBenchmark.reservationFirstExecution",
                "TransactionBenchmark.springFirst", "TransactionBenchmark.springDuplicate",
                "TransactionBenchmark.camelFirst", "TransactionBenchmark.camelDuplicate",
                "TransactionBenchmark.writeLastFirst", "TransactionBenchmark.writeLastReplay",
                "ContentionBenchmark.baseline", "ContentionBenchmark.distinctKeys", "ContentionBenchmark.hotKey",
                "PurgeBenchmark.purgeAll", "BatchBenchmark.baseline", "BatchBenchmark.perItemExecute", "BatchBenchmark.chunkApi");

        List<String> meta = new ArrayList<>();
        List<StatementCounts.Row> counts = StatementCounts.count(Database.H2_MEM, 20, meta);
        assertThat(counts).allSatisfy(row -> assertThat(row.error()).isEmpty());
        StatementCounts.Row baseline = counts.get(0);
        assertThat(baseline.operation()).isEqualTo("baseline");
        assertThat(baseline.statements()).isEqualTo(1.0);
        assertThat(baseline.commits()).isEqualTo(1.0);
        assertThat(baseline.sequence()).isEqualTo("INSERT > COMMIT");
        assertThat(counts.get(1).statements()).isGreaterThan(1.0);
        assertThat(counts.get(2).sequence()).endsWith("COMMIT").doesNotContain("INSERT");
        assertThat(meta).singleElement().asString().startsWith(StatementCounts.VERSION + "\th2mem\tH2 ");

        Path tsv = dir.resolve("counts.tsv");
        List<String> lines = new ArrayList<>(meta);
        lines.add(0, StatementCounts.HEADER);
        counts.forEach(row -> lines.add(row.line()));
        Files.write(tsv, lines);
        BenchReport report = new BenchReport();
        report.readResults(json);
        report.readCounts(tsv);
        String markdown = report.markdown("scripts/bench");

        assertThat(counts).extracting(StatementCounts.Row::operation).containsExactlyElementsOf(StatementCounts.OPERATIONS);
        assertThat(markdown).contains("| H2 (memory) | ", "INSERT > COMMIT", "Reproduce with `scripts/bench`", "### Beside the peers")
                .doesNotContain("failed");

        List<String> interleaved = Interleaved.run(Database.H2_MEM, 2, 2, 10);
        assertThat(interleaved).hasSize(Interleaved.OPERATIONS.size() + Interleaved.COMPARISONS.size());
        assertThat(interleaved.subList(0, Interleaved.OPERATIONS.size()))
                .allSatisfy(line -> assertThat(Double.parseDouble(line.split("\t")[2])).isPositive());
        assertThat(interleaved.subList(Interleaved.OPERATIONS.size(), interleaved.size()))
                .extracting(line -> line.split("\t")[1]).containsExactlyElementsOf(Interleaved.COMPARISONS);
        assertThat(interleaved.subList(Interleaved.OPERATIONS.size(), interleaved.size()))
                .allSatisfy(line -> assertThat(Double.parseDouble(line.split("\t")[3])).isPositive());

        List<StatementCounts.Row> batch = StatementCounts.countBatch(Database.H2_MEM, 3, 100, new ArrayList<>());
        assertThat(batch).extracting(StatementCounts.Row::operation).containsExactlyElementsOf(StatementCounts.BATCH_OPERATIONS);
        assertThat(batch).allSatisfy(row -> assertThat(row.error()).isEmpty());
        assertThat(batch.get(0).statements()).as("baseline: one batch of rows").isEqualTo(1.0);
        assertThat(batch.get(0).sequence()).isEqualTo("INSERT > COMMIT");
        assertThat(batch.get(2).statements()).as("chunk API: claim, rows, recording").isLessThan(batch.get(1).statements());
        Path batchTsv = dir.resolve("batch.tsv");
        List<String> batchLines = new ArrayList<>(List.of(StatementCounts.HEADER));
        batch.forEach(row -> batchLines.add(row.line()));
        Files.write(batchTsv, batchLines);
        BenchReport batchReport = new BenchReport();
        batchReport.readResults(json);
        batchReport.readCounts(batchTsv);
        assertThat(batchReport.batchMarkdown("scripts/bench --batch")).contains("| H2 (memory) | 1000 | 250 | ", "| chunk API |")
                .doesNotContain("failed");
    }

    /**
     * Lease mode's interleaved pass, two rounds of two: each first execution must run and each
     * replay replay (the targets check every outcome), on H2 and, where scripts/redis.sh's and
     * scripts/dynalite.sh's servers are given, on Redis and DynamoDB beside it.
     */
    @Test
    void leaseModeBesideEachStore() throws Exception {
        List<String> stores = new ArrayList<>(List.of("h2mem"));
        if (System.getenv("IDEMPOTENCY_REDIS_URI") != null) {
            stores.add("redis");
        }
        if (System.getenv("IDEMPOTENCY_DYNALITE_ENDPOINT") != null) {
            stores.add("dynamodb");
        }
        List<String> lines = LeaseInterleaved.run(stores, 2, 2);
        assertThat(lines).hasSize(3 * stores.size())
                .allSatisfy(line -> assertThat(Double.parseDouble(line.split("\t")[2])).isPositive());
    }

    /**
     * The consumers' interleaved pass, one round of 300 messages on H2, where scripts/kafka.sh's
     * broker is given: each variant must write each message once (the pass checks it after every
     * run) and report a rate.
     */
    @Test
    void kafkaConsumersBesideBareOnes() throws Exception {
        String bootstrap = System.getenv("IDEMPOTENCY_KAFKA_BOOTSTRAP");
        Assumptions.assumeTrue(bootstrap != null, "IDEMPOTENCY_KAFKA_BOOTSTRAP is not set: no broker to read from");
        String topic = ConsumerInterleaved.fill(bootstrap, 300);
        List<String> lines = ConsumerInterleaved.run(Database.H2_MEM, bootstrap, topic, 300, 1);
        assertThat(lines).hasSize(ConsumerInterleaved.VARIANTS.size() + 2)
                .allSatisfy(line -> assertThat(Double.parseDouble(line.split("\t")[3])).isPositive());
        assertThat(lines).extracting(line -> line.split("\t")[1])
                .endsWith("idempotentRecord÷bareRecord", "idempotentBatch÷bareBatch");
    }
}
