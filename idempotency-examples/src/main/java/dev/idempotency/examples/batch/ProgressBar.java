package dev.idempotency.examples.batch;

import dev.idempotency.JobProgress;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * A progress bar, the {@code Consumer<JobProgress>} a {@code BatchJob} tells after every committed
 * chunk: items done of the total, executed, replayed, failed (and held and mismatched, if any),
 * items per second and the time left. On a terminal one line is
 * redrawn in place with {@code \r}; otherwise (a pipe, a log file) a plain line is printed every
 * few chunks and for the last one.
 */
public final class ProgressBar implements Consumer<JobProgress> {

    private static final int WIDTH = 30;

    private final PrintStream out;
    private final boolean inPlace;
    private final int everyChunks;
    private int lastLength;

    /**
     * @param out where to draw
     * @param inPlace whether to redraw one line ({@code System.console() != null})
     * @param everyChunks without redrawing, print every this many chunks
     */
    public ProgressBar(PrintStream out, boolean inPlace, int everyChunks) {
        this.out = out;
        this.inPlace = inPlace;
        this.everyChunks = Math.max(1, everyChunks);
    }

    @Override
    public void accept(JobProgress p) {
        boolean last = p.total() >= 0 && p.done() >= p.total();
        String line = line(p);
        if (inPlace) {
            out.print('\r' + line + " ".repeat(Math.max(0, lastLength - line.length())));
            lastLength = line.length();
            if (last) {
                out.println();
            }
            out.flush();
        } else if (last || p.chunks() % everyChunks == 0) {
            out.println(line);
        }
    }

    /**
     * @param p the progress
     * @return one line: bar, counts, rate and time left
     */
    static String line(JobProgress p) {
        StringBuilder s = new StringBuilder();
        if (p.total() > 0) {
            double part = Math.min(1.0, (double) p.done() / p.total());
            int filled = (int) Math.round(part * WIDTH);
            s.append('[').append("#".repeat(filled)).append(".".repeat(WIDTH - filled)).append("] ")
                    .append(String.format(Locale.ROOT, "%3.0f%% %,d/%,d", part * 100, p.done(), p.total()));
        } else {
            s.append(String.format(Locale.ROOT, "%,d", p.done()));
        }
        s.append(String.format(Locale.ROOT, "  executed %,d  replayed %,d  failed %,d", p.executed(), p.replayed(), p.failed()));
        if (p.held() > 0) {
            s.append(String.format(Locale.ROOT, "  held %,d", p.held()));
        }
        if (p.mismatched() > 0) {
            s.append(String.format(Locale.ROOT, "  mismatched %,d", p.mismatched()));
        }
        s.append(String.format(Locale.ROOT, "  %,.0f items/s", p.itemsPerSecond()));
        p.remaining().ifPresent(left -> s.append("  ").append(format(left)).append(" left"));
        return s.toString();
    }

    private static String format(Duration d) {
        long seconds = (d.toMillis() + 999) / 1000;
        return seconds >= 60 ? String.format(Locale.ROOT, "%d min %02d s", seconds / 60, seconds % 60) : seconds + " s";
    }
}
