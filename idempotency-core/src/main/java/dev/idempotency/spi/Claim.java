package dev.idempotency.spi;

import java.util.Objects;

/** What {@link TransactionalStore#claim} found. */
public sealed interface Claim permits Claim.Acquired, Claim.Existing, Claim.Busy {

    /** @return the claim that means "this transaction now holds the key" */
    static Claim acquired() {
        return Acquired.INSTANCE;
    }

    /** @return the claim that means "another transaction held the key past the lock timeout" */
    static Claim busy() {
        return Busy.INSTANCE;
    }

    /**
     * @param record the committed, unexpired record found
     * @return the claim that carries it
     */
    static Claim existing(StoredRecord record) {
        return new Existing(record);
    }

    /** This transaction now holds the key: an in-progress record is written in it. */
    final class Acquired implements Claim {
        private static final Acquired INSTANCE = new Acquired();

        private Acquired() {
        }

        @Override
        public String toString() {
            return "Claim.Acquired";
        }
    }

    /** Another transaction held the key for longer than the lock timeout. */
    final class Busy implements Claim {
        private static final Busy INSTANCE = new Busy();

        private Busy() {
        }

        @Override
        public String toString() {
            return "Claim.Busy";
        }
    }

    /**
     * A committed, unexpired record of the key.
     *
     * @param record the record
     */
    record Existing(StoredRecord record) implements Claim {
        /**
         * @param record the record
         * @throws NullPointerException if {@code record} is null
         */
        public Existing {
            Objects.requireNonNull(record, "record");
        }
    }
}
