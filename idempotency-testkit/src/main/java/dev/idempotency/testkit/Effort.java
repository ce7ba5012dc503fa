package dev.idempotency.testkit;

import java.util.Locale;

/**
 * How hard {@link IdempotencyStoreContract} tries: the number of random operation sequences its
 * stateful property runs, and the number of rounds of its concurrency property.
 *
 * <p>Chosen by the system property {@value #PROPERTY}: {@code quick} (the default, a few seconds
 * per store, for every build), {@code deep} ({@value #DEEP_SEQUENCES} sequences, for a release or
 * a new store), or a number of sequences. With Maven:
 * {@code mvn verify -Didempotency.testkit.effort=deep}.
 *
 * @param sequences how many random sequences the stateful property runs, at least 1
 * @param concurrentRounds how many rounds of concurrent attempts the concurrency property runs, at least 1
 */
public record Effort(int sequences, int concurrentRounds) {

    /** The system property that chooses the effort. */
    public static final String PROPERTY = "idempotency.testkit.effort";
    /** Sequences run by {@link #quick()}. */
    public static final int QUICK_SEQUENCES = 200;
    /** Concurrency rounds run by {@link #quick()}. */
    public static final int QUICK_ROUNDS = 30;
    /** Sequences run by {@link #deep()}. */
    public static final int DEEP_SEQUENCES = 10_000;
    /** Concurrency rounds run by {@link #deep()}. */
    public static final int DEEP_ROUNDS = 1_000;

    /**

     * @param sequences how many random sequences the stateful property runs, at least 1

     * @param concurrentRounds how many rounds of concurrent attempts the concurrency property runs, at least 1

     * @throws IllegalArgumentException if a count is below 1

     */
    public Effort {
        if (sequences < 1) {
            throw new IllegalArgumentException("sequences must be at least 1, was " + sequences);
        }
        if (concurrentRounds < 1) {
            throw new IllegalArgumentException("concurrentRounds must be at least 1, was " + concurrentRounds);
        }
    }

    /** @return the default: a few seconds per store */
    public static Effort quick() {
        return new Effort(QUICK_SEQUENCES, QUICK_ROUNDS);
    }

    /** @return the deep setting: {@value #DEEP_SEQUENCES} sequences */
    public static Effort deep() {
        return new Effort(DEEP_SEQUENCES, DEEP_ROUNDS);
    }

    /**
     * @param value {@code quick}, {@code deep}, or a positive number of sequences (the concurrency
     *     property then runs a tenth as many rounds, at least one)
     * @return the effort it names
     * @throws IllegalArgumentException if the value is none of these
     */
    public static Effort parse(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        if (v.equals("quick")) {
            return quick();
        }
        if (v.equals("deep")) {
            return deep();
        }
        try {
            int n = Integer.parseInt(v);
            return new Effort(n, Math.max(1, n / 10));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PROPERTY + " must be 'quick', 'deep' or a positive number of sequences, was '"
                    + value + "'", e);
        }
    }

    /** @return the effort named by the system property {@value #PROPERTY}, or {@link #quick()} if unset */
    public static Effort fromSystemProperty() {
        String value = System.getProperty(PROPERTY);
        return value == null || value.isBlank() ? quick() : parse(value);
    }
}
