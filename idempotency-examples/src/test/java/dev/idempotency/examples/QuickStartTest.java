package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** Runs the code the README and the getting-started page quote. */
class QuickStartTest {

    @Test
    void theReadmeCodeRunsAndReplays() throws Exception {
        JdbcDataSource ds = shop("quickstart");
        QuickStart quickStart = new QuickStart(ds);
        quickStart.createTable(); // idempotent itself

        String first = quickStart.reserveTwo("tenant-42", "8e03978e-40d5-43e8-bc93-6894a57f9324");
        String retry = quickStart.reserveTwo("tenant-42", "8e03978e-40d5-43e8-bc93-6894a57f9324");
        assertThat(first).isEqualTo("reservation 1: 2 x sku-1").isEqualTo(retry);

        assertThat(quickStart.chargeWithFingerprint("tenant-42", "k-1", "cust-1", 1250)).isEqualTo("200 charge 1: 1250 cents from cust-1");
        assertThat(quickStart.chargeWithFingerprint("tenant-42", "k-1", "cust-1", 1250))
                .isEqualTo("200 charge 1: 1250 cents from cust-1 (Idempotent-Replayed: true)");
        assertThat(quickStart.chargeWithFingerprint("tenant-42", "k-1", "cust-1", 5)).startsWith("422");
        try (Connection c = ds.getConnection()) {
            assertThat(Shop.single(c, "SELECT COUNT(*) FROM charge")).isEqualTo(1);
            assertThat(Shop.available(c, "sku-1")).isEqualTo(8);
        }
    }

    @Test
    void aResultOfTheApplicationsOwnTypeIsReplayedThroughItsNamedCodec() throws Exception {
        JdbcDataSource ds = shop("quickstart-codec");
        QuickStart quickStart = new QuickStart(ds);
        QuickStart.Receipt first = quickStart.chargeWithReceipt("tenant-42", "k-receipt", "cust-1", 990);
        QuickStart.Receipt retry = quickStart.chargeWithReceipt("tenant-42", "k-receipt", "cust-1", 990);
        assertThat(first).isEqualTo(new QuickStart.Receipt("charge 1: 990 cents from cust-1", 990)).isEqualTo(retry);
        try (Connection c = ds.getConnection()) {
            assertThat(Shop.single(c, "SELECT COUNT(*) FROM charge")).isEqualTo(1);
            assertThat(Shop.single(c, "SELECT COUNT(*) FROM idempotency_record WHERE result_codec = 'receipt-v1'")).isEqualTo(1);
        }
    }

    @Test
    void twoPoliciesAreTwoInstances() {
        var instances = QuickStart.twoPolicies();
        assertThat(instances.get(0).keyPolicy().retention()).isEqualTo(java.time.Duration.ofHours(24));
        assertThat(instances.get(0).keyPolicy().hasFinalFailures()).isFalse();
        assertThat(instances.get(1).keyPolicy().retention()).isEqualTo(java.time.Duration.ofDays(7));
        assertThat(instances.get(1).keyPolicy().isFinalFailure(new QuickStart.CardDeclined("no funds"))).isTrue();
    }

    @Test
    void thePurgeLoopRemovesEveryExpiredRecordInBatches() throws Exception {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:quickstart-purge;DB_CLOSE_DELAY=-1");
        QuickStart quickStart = new QuickStart(ds);
        quickStart.createTable();
        java.util.concurrent.atomic.AtomicReference<java.time.Instant> now =
                new java.util.concurrent.atomic.AtomicReference<>(java.time.Instant.parse("2026-01-01T00:00:00Z"));
        dev.idempotency.Idempotency<Connection> idem = dev.idempotency.jdbc.Idempotent.builder().clock(now::get).build();
        for (int i = 0; i < 2_500; i++) {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                idem.execute(dev.idempotency.IdempotencyKey.of("t", "k-" + i), c, () -> "v");
                c.commit();
            }
        }
        now.set(now.get().plus(dev.idempotency.KeyPolicy.DEFAULT_RETENTION));
        assertThat(quickStart.purgeExpired(idem)).isEqualTo(2_500);
        assertThat(quickStart.purgeExpired(idem)).isZero();
    }

    /** An in-memory H2 database with the shop's tables and the key table. */
    private static JdbcDataSource shop(String name) throws Exception {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
        try (Connection c = ds.getConnection()) {
            Shop.createTables(c);
        }
        new QuickStart(ds).createTable();
        return ds;
    }
}
