package dev.idempotency.spring.kafka;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ContainerProperties;

/** The settings that may commit an offset before the database commit are refused, each named. */
class OffsetCommitCheckTest {

    @Test
    void theContainersOwnCommitsPass() {
        for (ContainerProperties.AckMode mode : new ContainerProperties.AckMode[] {ContainerProperties.AckMode.BATCH,
                ContainerProperties.AckMode.RECORD, ContainerProperties.AckMode.TIME, ContainerProperties.AckMode.MANUAL}) {
            ContainerProperties properties = new ContainerProperties("t");
            properties.setAckMode(mode);
            assertThatCode(() -> SpringKafkaIdempotency.check("l", properties, Map.of("enable.auto.commit", "false")))
                    .doesNotThrowAnyException();
        }
    }

    @Test
    void autoCommitIsRefusedFromTheFactoryOrTheContainer() {
        assertThatThrownBy(() -> SpringKafkaIdempotency.check("l", new ContainerProperties("t"), Map.of("enable.auto.commit", true)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("enable.auto.commit=true")
                .hasMessageContaining("spring.kafka.consumer.enable-auto-commit");
        ContainerProperties properties = new ContainerProperties("t");
        properties.getKafkaConsumerProperties().setProperty("enable.auto.commit", "true");
        assertThatThrownBy(() -> SpringKafkaIdempotency.check("l", properties, Map.of()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("enable.auto.commit=true");
    }

    @Test
    void aTypedContainerFactoryTakesTheCheckAndItsContainersAreChecked() {
        ConcurrentKafkaListenerContainerFactory<String, String> factory = new ConcurrentKafkaListenerContainerFactory<>();
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, true,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        factory.setConsumerFactory(new DefaultKafkaConsumerFactory<>(config));
        factory.setContainerCustomizer(SpringKafkaIdempotency.offsetCommitCheck(config)); // no cast: typed as the factory
        assertThatThrownBy(() -> factory.createContainer("t")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("enable.auto.commit=true");
    }

    @Test
    void manualImmediateAcknowledgmentsAreRefused() {
        ContainerProperties properties = new ContainerProperties("t");
        properties.setAckMode(ContainerProperties.AckMode.MANUAL_IMMEDIATE);
        assertThatThrownBy(() -> SpringKafkaIdempotency.check("l", properties, Map.of()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("MANUAL_IMMEDIATE")
                .hasMessageContaining("spring.kafka.listener.ack-mode");
    }
}
