package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The estimate of the server's clock is safe: whatever the offset between the clocks, the round
 * trips, where in them the server answered, and how late its {@code Date} header is (within the
 * allowance), the window it gives always contains the server's true time, so that a lease judged
 * ended by the window's earliest has ended by the server's clock. A simulated server, whose clock is
 * the local one plus an offset and drifts by less than the allowance.
 */
class ServerClockTest {

    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    private static final long LAG_NANOS = 10_000_000;

    /** One exchange: the gap since the last, the round trip, where in it the server answered, how late its Date was. */
    record Exchange(long gapMicros, long roundTripMicros, int answeredAtPercent, long lateMicros) {
    }

    @Test
    void theEstimateAlwaysContainsTheServersTime() {
        qt().withExamples(300).forAll(longs().between(-10_000_000_000_000L, 10_000_000_000_000L), integers().between(-50, 50),
                lists().of(longs().between(0, 3_000_000).zip(longs().between(1, 200_000), integers().between(0, 100),
                        (gap, rtt, at) -> new long[] {gap, rtt, at}).zip(longs().between(0, LAG_NANOS / 1000),
                        (a, late) -> new Exchange(a[0], a[1], (int) a[2], late))).ofSizeBetween(1, 60))
                .checkAssert((offsetMicros, driftPpm, exchanges) -> {
                    ServerClock clock = new ServerClock(Duration.ofNanos(LAG_NANOS));
                    long start = 1_000_000_000_000L;
                    long local = start;
                    long offset = 1_700_000_000_000_000_000L + offsetMicros * 1000;
                    for (Exchange e : exchanges) {
                        local += e.gapMicros() * 1000;
                        long sent = local;
                        long answered = sent + e.roundTripMicros() * 1000 * e.answeredAtPercent() / 100;
                        local = sent + e.roundTripMicros() * 1000;
                        long serverAtAnswer = server(answered, start, offset, driftPpm) - e.lateMicros() * 1000;
                        String date = HTTP_DATE.format(Instant.ofEpochSecond(Math.floorDiv(serverAtAnswer, 1_000_000_000L)));
                        clock.observe(sent, local, Optional.of(date));
                        ServerClock.Window w = clock.now(local);
                        long truth = Math.floorDiv(server(local, start, offset, driftPpm), 1_000_000);
                        assertThat(truth).as("the server's time " + truth + " within the estimate " + w + " after " + e)
                                .isBetween(w.earliest(), w.latest());
                    }
                    assertThat(clock.contradictions()).as("contradictions of a server within the allowances").isZero();
                });
    }

    /** The simulated server's clock at local time {@code local}: the offset, and a drift of {@code ppm} since {@code start}. */
    private static long server(long local, long start, long offset, int ppm) {
        return local + offset + (local - start) / 1_000_000 * ppm;
    }

    @Test
    void aClockWithoutAnyResponseHasNoEstimate() {
        ServerClock clock = new ServerClock(Duration.ZERO);
        assertThat(clock.known()).isFalse();
        clock.observe(0, 1, Optional.of("not a date"));
        assertThat(clock.known()).as("an unreadable Date is ignored").isFalse();
        clock.observe(0, 1, Optional.empty());
        assertThat(clock.known()).isFalse();
        assertThat(List.of(clock.toString())).singleElement().asString().contains("no response");
    }
}
