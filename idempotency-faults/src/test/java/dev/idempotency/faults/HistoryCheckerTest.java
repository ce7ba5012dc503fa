package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker must report every broken promise when fed a bad history, and nothing for a good one. */
class HistoryCheckerTest {

    private final HistoryChecker checker = new HistoryChecker(type -> type.equals(SQLException.class.getName()));

    private static DatabaseState state(Map<String, List<String>> effects, Map<String, DatabaseState.Record> records) {
        return new DatabaseState(effects, records);
    }

    private static DatabaseState.Record completed(String value) {
        return new DatabaseState.Record("COMPLETED", value);
    }

    @Test
    void aGoodHistoryPasses() {
        List<HistoryEvent> history = List.of(
                HistoryEvent.invoke("a", "k1"), HistoryEvent.ack("a", "k1", true, "a-1"),
                HistoryEvent.invoke("b", "k1"), HistoryEvent.ack("b", "k1", false, "a-1"),
                HistoryEvent.invoke("b", "k2"), HistoryEvent.fail("b", "k2", new SQLException("cut")),
                HistoryEvent.invoke("a", "k3"), // killed: indeterminate, and it did commit
                HistoryEvent.invoke("a", "k4"), HistoryEvent.busy("a", "k4"));
        HistoryChecker.Report report = checker.check(history, state(
                Map.of("k1", List.of("a-1"), "k3", List.of("a-2")), Map.of("k1", completed("a-1"), "k3", completed("a-2"))));

        assertThat(report.violations()).isEmpty();
        assertThat(report.counts()).containsEntry("attempts", 5).containsEntry("executed answers", 1).containsEntry("replayed answers", 1)
                .containsEntry("busy answers", 1).containsEntry("failed attempts", 1).containsEntry("indeterminate attempts", 1)
                .containsEntry("duplicates", 0).containsEntry("acknowledged lost", 0).containsEntry("stuck", 0);
    }

    @Test
    void aKeyCommittedTwiceIsADuplicate() {
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.invoke("a", "k1"), HistoryEvent.invoke("b", "k1")),
                state(Map.of("k1", List.of("a-1", "b-1")), Map.of("k1", completed("b-1"))));

        assertThat(report.violations()).singleElement().asString().startsWith("duplicate: key k1 has 2 business rows");
        assertThat(report.counts()).containsEntry("duplicates", 1);
    }

    @Test
    void anAcknowledgedOperationWhoseRowsAreGoneIsLost() {
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.invoke("a", "k1"), HistoryEvent.ack("a", "k1", true, "a-1")),
                state(Map.of(), Map.of()));

        assertThat(report.violations()).singleElement().asString().startsWith("acknowledged lost: key k1 was answered a-1");
        assertThat(report.counts()).containsEntry("acknowledged lost", 1);
    }

    @Test
    void anAcknowledgedValueThatIsNotTheRecordedOneIsLost() {
        // What H2 with WRITE_DELAY does: the acknowledged commit vanished and a retry ran the work again.
        HistoryChecker.Report report = checker.check(List.of(
                        HistoryEvent.ack("a", "k1", true, "a-1"), HistoryEvent.ack("b", "k1", true, "b-7")),
                state(Map.of("k1", List.of("b-7")), Map.of("k1", completed("b-7"))));

        assertThat(report.violations()).anySatisfy(v -> assertThat(v).startsWith("retry not replayed: key k1"))
                .anySatisfy(v -> assertThat(v).startsWith("executed twice: key k1"))
                .anySatisfy(v -> assertThat(v).startsWith("acknowledged lost: key k1 was answered a-1"));
    }

    /**
     * Found by the deep client-kill run on an H2 file with eight threads: a replay answered a result
     * whose commit was visible but not yet written, the process was killed, and a later attempt ran the
     * work again. The first answer in file order was the surviving one, and the lost one went unreported.
     */
    @Test
    void aLostReplayIsReportedWhicheverAnswerComesFirst() {
        HistoryChecker.Report report = checker.check(List.of(
                        HistoryEvent.ack("c67", "k73", true, "c67-7"), HistoryEvent.ack("c8", "k73", false, "c8-3")),
                state(Map.of("k73", List.of("c67-7")), Map.of("k73", completed("c67-7"))));

        assertThat(report.violations()).contains("acknowledged lost: key k73 was answered c8-3 but the database holds record"
                + " Record[status=COMPLETED, value=c67-7] and business rows [c67-7]");
        assertThat(report.counts()).containsEntry("acknowledged lost", 1);
    }

    @Test
    void aRetryAnsweredWithAnotherValueIsNotAReplay() {
        HistoryChecker.Report report = checker.check(List.of(
                        HistoryEvent.ack("a", "k1", true, "a-1"), HistoryEvent.ack("b", "k1", false, "x")),
                state(Map.of("k1", List.of("a-1")), Map.of("k1", completed("a-1"))));

        assertThat(report.violations()).first().asString().startsWith("retry not replayed: key k1 was answered with different values");
        assertThat(report.violations()).anySatisfy(v -> assertThat(v).startsWith("acknowledged lost: key k1 was answered x"));
    }

    @Test
    void aKeyLeftInProgressIsStuck() {
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.invoke("a", "k1")),
                state(Map.of(), Map.of("k1", new DatabaseState.Record("IN_PROGRESS", null))));

        assertThat(report.violations()).singleElement().asString().isEqualTo("stuck: key k1 is left IN_PROGRESS");
        assertThat(report.counts()).containsEntry("stuck", 1);
    }

    @Test
    void aBusinessRowWithoutItsRecordAndARecordWithoutItsRowAreHalfWritten() {
        HistoryChecker.Report report = checker.check(List.of(),
                state(Map.of("k1", List.of("a-1"), "k3", List.of("a-3")), Map.of("k2", completed("a-2"), "k3", completed("a-4"))));

        assertThat(report.violations()).containsExactlyInAnyOrder(
                "half-written: key k1 has a business row [a-1] but its record is null",
                "half-written: key k2 has a completed record (a-2) but no business row",
                "half-written: key k3 records a-4 but its business row holds [a-3]");
    }

    @Test
    void anExceptionOfAnUnexpectedTypeIsReported() {
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.fail("a", "k1", new IllegalStateException("boom"))),
                state(Map.of(), Map.of()));

        assertThat(report.violations()).containsExactly("unexpected exception: key k1 (client a) got java.lang.IllegalStateException");
        assertThat(report.failures()).containsEntry("java.lang.IllegalStateException", 1);
    }

    @Test
    void aLeasedOperationWithOneEffectOutsideTheDatabasePasses() {
        HistoryChecker.Report report = checker.check(List.of(
                        HistoryEvent.invoke("a", "k1"), // killed after the call: resumed by b, the service replayed its effect
                        HistoryEvent.invoke("b", "k1"), HistoryEvent.ack("b", "k1", true, "a-1/a-2")),
                new DatabaseState(Map.of("k1", List.of("a-1/a-2")), Map.of("k1", completed("a-1/a-2")), Map.of("k1", List.of("a-1/a-2"))));

        assertThat(report.violations()).isEmpty();
        assertThat(report.counts()).containsEntry("external effects", 1).containsEntry("external duplicates", 0);
    }

    @Test
    void anEffectMadeTwiceOutsideTheDatabaseIsReported() {
        // A call repeated after a take-over under another downstream key: the service made a second effect.
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.ack("b", "k1", true, "a-1/b-1")),
                new DatabaseState(Map.of("k1", List.of("a-1/b-1")), Map.of("k1", completed("a-1/b-1")),
                        Map.of("k1", List.of("a-1/a-2", "a-1/b-1"))));

        assertThat(report.violations()).containsExactly(
                "external effect repeated: key k1 made 2 effects outside the database [a-1/a-2, a-1/b-1]");
        assertThat(report.counts()).containsEntry("external duplicates", 1);
    }

    @Test
    void aCompletedKeyWithoutItsEffectOutsideTheDatabaseIsHalfWrittenAndItsAnswerLost() {
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.ack("a", "k1", true, "a-1/a-2")),
                new DatabaseState(Map.of("k1", List.of("a-1/a-2")), Map.of("k1", completed("a-1/a-2")), Map.of()));

        assertThat(report.violations()).containsExactly(
                "half-written: key k1 records a-1/a-2 but the external effects are []",
                "acknowledged lost: key k1 was answered a-1/a-2 but the database holds record Record[status=COMPLETED, value=a-1/a-2]"
                        + " and business rows [a-1/a-2], the external effects are []");
    }

    @Test
    void anEffectOutsideTheDatabaseOfAKeyNotCompletedIsHalfWritten() {
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.invoke("a", "k1")),
                new DatabaseState(Map.of(), Map.of("k1", new DatabaseState.Record("IN_PROGRESS", null)), Map.of("k1", List.of("a-1/a-2"))));

        assertThat(report.violations()).containsExactly("stuck: key k1 is left IN_PROGRESS",
                "half-written: key k1 made the external effect [a-1/a-2] but its record is Record[status=IN_PROGRESS, value=null]");
    }

    @Test
    void onAStoreWithoutBusinessRows_aLeasedOperationIsCheckedAgainstItsEffectOutside() {
        // Redis: the phases write nowhere, so the records are set against the service's effects alone.
        HistoryChecker.Report good = checker.check(List.of(HistoryEvent.invoke("a", "k1"),
                        HistoryEvent.invoke("b", "k1"), HistoryEvent.ack("b", "k1", true, "a-1/a-2")),
                new DatabaseState(null, Map.of("k1", completed("a-1/a-2")), Map.of("k1", List.of("a-1/a-2"))));
        assertThat(good.violations()).isEmpty();

        // A completion that recorded another answer than the charge the service made, and told the client so.
        HistoryChecker.Report bad = checker.check(List.of(HistoryEvent.ack("b", "k1", true, "b-1/b-2")),
                new DatabaseState(null, Map.of("k1", completed("b-1/b-2")), Map.of("k1", List.of("a-1/a-2"))));
        assertThat(bad.violations()).containsExactly(
                "half-written: key k1 records b-1/b-2 but the external effects are [a-1/a-2]",
                "acknowledged lost: key k1 was answered b-1/b-2 but the database holds record Record[status=COMPLETED, value=b-1/b-2]"
                        + " and business rows [], the external effects are [a-1/a-2]");
    }

    @Test
    void aPrepareRunAgainLeavesASecondBusinessRow() {
        // A take-over that ran the committed prepare again instead of resuming it: its first row stays pending.
        HistoryChecker.Report report = checker.check(List.of(HistoryEvent.ack("b", "k1", true, "a-1/a-2")),
                new DatabaseState(Map.of("k1", List.of("pending a-1", "a-1/a-2")), Map.of("k1", completed("a-1/a-2")),
                        Map.of("k1", List.of("a-1/a-2"))));

        assertThat(report.violations()).containsExactly("duplicate: key k1 has 2 business rows [pending a-1, a-1/a-2]");
    }

    @Test
    void anAnswerOfAnOutcomeTheWorkloadCannotProduceIsReported() {
        HistoryChecker.Report report = checker.check(List.of(new HistoryEvent("a", HistoryEvent.Type.FAIL, "k1", "unexpected outcome MISMATCH")),
                state(Map.of(), Map.of()));

        assertThat(report.violations()).containsExactly("unexpected exception: key k1 (client a) got unexpected outcome MISMATCH");
    }

    @Test
    void historiesAreReadBackFileByFileAndALineCutByAKillIsIgnored(@TempDir Path dir) throws Exception {
        try (History h = History.append(dir.resolve("a.history"))) {
            h.record(HistoryEvent.invoke("a", "k1"));
            h.record(HistoryEvent.ack("a", "k1", true, "a-1"));
        }
        Files.writeString(dir.resolve("b.history"), "b\tINVOKE\tk2\t\nb\tACK\tk2\tEXEC", StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("ignored.txt"), "not a history", StandardCharsets.UTF_8);

        assertThat(History.readAll(dir)).containsExactly(
                HistoryEvent.invoke("a", "k1"), HistoryEvent.ack("a", "k1", true, "a-1"), HistoryEvent.invoke("b", "k2"));
    }
}
