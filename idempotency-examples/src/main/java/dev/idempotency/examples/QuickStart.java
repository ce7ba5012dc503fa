package dev.idempotency.examples;

import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * The code the README and the getting-started page show, compiled and run by the tests. Each
 * tagged region is quoted in the documentation verbatim.
 */
public final class QuickStart {

    private final DataSource dataSource;

    /** @param dataSource where the shop's tables live */
    public QuickStart(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Step 2: the table, created once at startup (or ship the DDL resource with Flyway or Liquibase).
     */
    public void createTable() {
        // tag::table[]
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(dataSource);
        // end::table[]
    }

    /**
     * Step 3: one reservation, protected by the client's idempotency key.
     *
     * @param tenant the authenticated tenant: the key's scope
     * @param idempotencyKeyHeader the client's {@code Idempotency-Key}
     * @return the reservation, the same for every retry
     * @throws SQLException if the database fails
     */
    public String reserveTwo(String tenant, String idempotencyKeyHeader) throws SQLException {
        // tag::execute[]
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try {
                IdempotencyKey key = IdempotencyKey.of(tenant, idempotencyKeyHeader);
                Outcome<String> outcome = Idempotent.execute(key, connection, () -> Shop.reserve(connection, "sku-1", 2));
                connection.commit();
                return outcome.value(); // the first execution's result, for every retry
            } catch (SQLException | RuntimeException e) {
                connection.rollback(); // the work's writes and the key's claim go together: a retry runs the work again
                throw e;
            }
        }
        // end::execute[]
    }

    /**
     * A configured instance: built once, shared by every thread.
     *
     * @param tenant the key's scope
     * @param idempotencyKeyHeader the client's key
     * @param customer who pays
     * @param cents how much
     * @return what to answer
     * @throws SQLException if the database fails
     */
    public String chargeWithFingerprint(String tenant, String idempotencyKeyHeader, String customer, long cents) throws SQLException {
        // tag::configured[]
        Idempotency<Connection> idempotency = Idempotency.builder(JdbcIdempotencyStore.builder().table("idempotency_record").build())
                .keyPolicy(KeyPolicy.builder().retention(Duration.ofHours(24)).lockTimeout(Duration.ofSeconds(5)).build())
                .build();

        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            IdempotencyKey key = IdempotencyKey.of(tenant, idempotencyKeyHeader);
            Fingerprint request = Fingerprint.ofParts("POST /charges", customer, cents);
            IdempotentCall<String> call = IdempotentCall.of(key, request); // the key, the request's fingerprint
            Outcome<String> outcome = idempotency.execute(call, connection, () -> Shop.charge(connection, customer, cents));
            connection.commit();
            switch (outcome.status()) {
                case EXECUTED:
                case REPLAYED:
                    return "200 " + outcome.value() + (outcome.isReplay() ? " (Idempotent-Replayed: true)" : "");
                case IN_PROGRESS:
                    return "409 a request with this key is still in progress";
                case MISMATCH:
                    return "422 this key was used for a different request";
                default:
                    return "402 " + outcome.status();
            }
        }
        // end::configured[]
    }

    /**
     * A result type of the application's own, recorded through a named codec.
     *
     * @param charge the charge's description
     * @param cents how much
     */
    public record Receipt(String charge, long cents) {
        /** @return the recorded form: cents, a tab, the description */
        public String toText() {
            return cents + "\t" + charge;
        }

        /**
         * @param text a recorded form made by {@link #toText()}
         * @return the receipt
         */
        public static Receipt parse(String text) {
            int tab = text.indexOf('\t');
            return new Receipt(text.substring(tab + 1), Long.parseLong(text.substring(0, tab)));
        }
    }

    /**
     * A result of the application's own type, recorded and replayed through a named codec.
     *
     * @param tenant the key's scope
     * @param idempotencyKeyHeader the client's key
     * @param customer who pays
     * @param cents how much
     * @return the receipt, the same for every retry
     * @throws SQLException if the database fails
     */
    public Receipt chargeWithReceipt(String tenant, String idempotencyKeyHeader, String customer, long cents) throws SQLException {
        // tag::codec[]
        ResultCodec<Receipt> receipts = ResultCodec.of("receipt-v1", Receipt::toText, Receipt::parse);

        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            IdempotencyKey key = IdempotencyKey.of(tenant, idempotencyKeyHeader);
            Outcome<Receipt> outcome = Idempotent.execute(IdempotentCall.of(key, receipts), connection,
                    () -> new Receipt(Shop.charge(connection, customer, cents), cents));
            connection.commit();
            return outcome.value();
        }
        // end::codec[]
    }

    /** A payment provider's decline: a final failure, recorded and replayed like a result. */
    public static final class CardDeclined extends Exception {
        private static final long serialVersionUID = 1L;

        /** @param reason the provider's reason */
        public CardDeclined(String reason) {
            super(reason);
        }
    }

    /**
     * Two policies, two instances: settings such as retention and final failures belong to an
     * instance, not to a call. Built once at startup and kept.
     *
     * @return the instance for reservations, then the one for payments
     */
    public static List<Idempotency<Connection>> twoPolicies() {
        // tag::two-policies[]
        Idempotency<Connection> reservations = Idempotent.builder()
                .keyPolicy(KeyPolicy.builder().retention(Duration.ofHours(24)).build())
                .build();
        Idempotency<Connection> payments = Idempotent.builder()
                .keyPolicy(KeyPolicy.builder().retention(Duration.ofDays(7)).finalFailures(CardDeclined.class).build())
                .build();
        // end::two-policies[]
        return List.of(reservations, payments);
    }

    /**
     * Purges expired records in short transactions of bounded batches, as a scheduled job would.
     *
     * @param idempotency the configured instance
     * @return how many records were removed
     * @throws SQLException if the database fails
     */
    public int purgeExpired(Idempotency<Connection> idempotency) throws SQLException {
        // tag::purge[]
        int removed = 0;
        int batch;
        do {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(false);
                batch = idempotency.purgeExpired(connection, 1_000);
                connection.commit();
            }
            removed += batch;
        } while (batch == 1_000);
        // end::purge[]
        return removed;
    }
}
