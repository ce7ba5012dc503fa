package dev.idempotency.testkit;

import java.util.Locale;

/**
 * How hard {@link IdempotencyStoreContract} tries: the number of random operation sequences its
 * stateful property runs, the number of rounds of its concurrency property, and the number of random
 * sequences of its lease property (whose steps may sleep past a short lease, so it runs fewer).
 *
 * <p>Chosen by the system property {@value #PROPERTY}: {@code quick} (the default, a few seconds
 * per store, for every build), {@code deep} ({@value #DEEP_SEQUENCES} sequences, for a release or
 * a new store), or a number of sequences. With Maven:
 * {@code mvn verify -Didempotency.testkit.effort=deep}.
 *
 * @param sequences how many random sequences the stateful property runs, at least 1
 * @param concurrentRounds how many rounds of concurrent attempts the concurrency property runs, at least 1
 * @param leaseSequences how many random sequences of lease operations the lease property runs, at least 1
 */
public record Effort(int sequences, int concurrentRounds, int leaseSequences) {

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
    /** Lease sequences run by {@link #quick()}. */
    public static final int QUICK_LEASE_SEQUENCES = 50;
    /** Lease sequences run by {@link #deep()}. */
    public static final int DEEP_LEASE_SEQUENCES = 2_000;

    /**
     * @param sequences how many random sequences the stateful property runs, at least 1
     * @param concurrentRounds how many rounds of concurrent attempts the concurrency property runs, at least 1
     * @param leaseSequences how many random sequences of lease operations the lease property runs, at least 1
     * @throws IllegalArgumentException if a count is below 1
     */
    public Effort {
        if (sequences < 1) {
            throw new IllegalArgumentException("sequences must be at least 1, was " + sequences);
        }
        if (concurrentRounds < 1) {
            throw new IllegalArgumentException("concurrentRounds must be at least 1, was " + concurrentRounds);
        }
        if (leaseSequences < 1) {
            throw new IllegalArgumentException("leaseSequences must be at least 1, was " + leaseSequences);
        }
    }

    /**
     * An effort whose lease property runs a quarter as many sequences as the stateful property (at
     * least one).
     *
     * @param sequences how many random sequences the stateful property runs, at least 1
     * @param concurrentRounds how many rounds of concurrent attempts the concurrency property runs, at least 1
     * @throws IllegalArgumentException if a count is below 1
     */
    public Effort(int sequences, int concurrentRounds) {
        this(sequences, concurrentRounds, Math.max(1, sequences / 4));
    }

    /** @return the default: a few seconds per store */
    public static Effort quick() {
        return new Effort(QUICK_SEQUENCES, QUICK_ROUNDS, QUICK_LEASE_SEQUENCES);
    }

    /** @return the deep setting: {@value #DEEP_SEQUENCES} sequences, {@value #DEEP_LEASE_SEQUENCES} lease sequences */
    public static Effort deep() {
        return new Effort(DEEP_SEQUENCES, DEEP_ROUNDS, DEEP_LEASE_SEQUENCES);
    }

    /**
     * @param value {@code quick}, {@code deep}, or a positive number of sequences (the concurrency
     *     property then runs a tenth as many rounds, and the lease property a quarter as many
     *     sequences, at least one each)
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
