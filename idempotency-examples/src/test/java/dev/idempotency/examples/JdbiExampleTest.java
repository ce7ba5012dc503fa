package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.sql.Connection;
import org.h2.jdbcx.JdbcDataSource;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/** Runs the Jdbi code the getting-started page quotes. */
class JdbiExampleTest {

    @Test
    void theReadmeJdbiCodeReplaysARetry() throws Exception {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:jdbi-example;DB_CLOSE_DELAY=-1");
        try (Connection c = ds.getConnection()) {
            Shop.createTables(c);
        }
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(ds);
        JdbiExample example = new JdbiExample(Jdbi.create(ds));

        assertThat(example.reserveTwo("tenant-1", "k-1")).isEqualTo("reservation 1: 2 x sku-1");
        assertThat(example.reserveTwo("tenant-1", "k-1")).isEqualTo("reservation 1: 2 x sku-1");
        try (Connection c = ds.getConnection()) {
            assertThat(Shop.available(c, "sku-1")).isEqualTo(8);
        }
    }
}
