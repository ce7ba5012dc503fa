package dev.idempotency.examples.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.testsupport.TestEnvironment;
import java.util.Map;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The example does what its Javadoc says, over the real broker of scripts/kafka.sh. */
class PaymentsConsumerTest {

    @Test
    void eachPaymentIsBookedOnceThoughOneWasSentTwiceAndTheFirstConsumerDiedBeforeItsOffsetCommit() throws Exception {
        String bootstrap = TestEnvironment.require("IDEMPOTENCY_KAFKA_BOOTSTRAP",
                "start a broker with `scripts/kafka.sh start` and eval its export lines (scripts/test does both)");
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:payments-test-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        PaymentsConsumer.Run run = PaymentsConsumer.run(bootstrap, dataSource);
        assertThat(run.messagesSent()).isEqualTo(6);
        assertThat(run.paymentsBooked()).isEqualTo(5);
        assertThat(run.bookingsPerPayment()).isEqualTo(Map.of("pay-1", 1, "pay-2", 1, "pay-3", 1, "pay-4", 1, "pay-5", 1));
    }
}
