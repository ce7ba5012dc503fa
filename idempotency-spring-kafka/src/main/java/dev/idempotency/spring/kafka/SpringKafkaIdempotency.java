package dev.idempotency.spring.kafka;

import dev.idempotency.ManagedIdempotency;
import dev.idempotency.RecordedFailureException;
import dev.idempotency.RetryPolicy;
import dev.idempotency.kafka.DeadLetterHandler;
import dev.idempotency.kafka.IdempotentConsumer;
import dev.idempotency.kafka.MessageIds;
import dev.idempotency.kafka.MissingMessageIdException;
import dev.idempotency.kafka.RecordHandler;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.config.ContainerCustomizer;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Idempotent {@code @KafkaListener} methods: the consumers of {@code idempotency-kafka}
 * ({@link IdempotentConsumer}) on an engine whose transactions Spring's transaction manager runs
 * ({@code SpringTransactions}), so that the listener's {@code JdbcTemplate} statements join the
 * transaction that records the record's key.
 *
 * <p><b>Record listeners</b> ({@link #recordListener}): each record in a transaction of its own, in
 * which the handler runs and the key (the consumer group, the message id) is recorded; a record
 * delivered or sent again replays and is heard through the listener's {@code onDuplicate}. A handler
 * failure rolls the transaction back and reaches the container, whose {@link DefaultErrorHandler}
 * ({@link #errorHandler}) counts the attempts, seeks back and delivers the record again, after its
 * back-off. After the last attempt, the error handler's recoverer ({@link #recoverer}):
 * <ol>
 *   <li>publishes the record to the dead-letter topic (a {@code DeadLetterPublishingRecoverer},
 *       which waits for the broker's acknowledgement);</li>
 *   <li>then records the failure as final under the record's key
 *       ({@link IdempotentConsumer#recordFailure}), in a transaction of its own.</li>
 * </ol>
 * The error handler then commits the record's offset. A redelivery of the record replays the
 * recorded failure: the handler does not run, and nothing is published again, since the failure is
 * recorded only once its copy is on the dead-letter topic. A crash between the two steps publishes
 * the copy again on the record's next last attempt: the hand-off is at least once, and the copy
 * keeps the record's headers, its message id among them, for the dead-letter topic's consumer to
 * deduplicate.
 *
 * <p><b>Batch listeners</b> ({@link #batchListener}): a poll's records in one transaction with the
 * chunk protocol, their attempts counted by the consumer itself, as in a plain poll loop; a record
 * that fails every attempt is recorded final and handed to the dead-letter handler, such as
 * {@link #deadLetters} over a {@code DeadLetterPublishingRecoverer}, while the other records commit.
 *
 * <p><b>Offsets</b>: the container commits a record's offset after the listener returns, so after the
 * database commit of its key, with every {@code AckMode} the container commits by itself
 * ({@code BATCH}, the default and the recommended one, {@code RECORD}, {@code TIME}, {@code COUNT},
 * {@code COUNT_TIME}). {@link #offsetCommitCheck} refuses the settings that may commit an offset
 * before that commit.
 *
 * <p>Thread-safe: one instance serves every listener container of the application.
 */
public final class SpringKafkaIdempotency {

    /** The attempts of a failing record before its failure is recorded final, by default. */
    public static final int DEFAULT_MAX_ATTEMPTS = IdempotentConsumer.DEFAULT_MAX_ATTEMPTS;

    private static final Logger log = LoggerFactory.getLogger(SpringKafkaIdempotency.class);

    private final ManagedIdempotency<Connection> engine;
    private final Map<String, IdempotentConsumer<Connection, ?, ?>> recordListeners = new ConcurrentHashMap<>();

    private SpringKafkaIdempotency(ManagedIdempotency<Connection> engine) {
        this.engine = engine;
    }

    /**
     * @param engine the engine over {@code SpringTransactions} (the Boot auto-configuration's
     *     {@code ManagedIdempotency<Connection>}); its key policy must declare
     *     {@code PoisonMessageException} final
     * @return the adapter
     */
    public static SpringKafkaIdempotency of(ManagedIdempotency<Connection> engine) {
        return new SpringKafkaIdempotency(Objects.requireNonNull(engine, "engine"));
    }

    /**
     * The consumer of a record listener, its key id from the producer's message-id header
     * ({@link MessageIds#header()}): call its {@link IdempotentConsumer#handle} from the
     * {@code @KafkaListener} method. Its failures reach the container's error handler
     * ({@link IdempotentConsumer.Builder#retriedByCaller}).
     *
     * @param group the listener's consumer group ({@code groupId}), the scope of its keys
     * @param handler the listener's processing of one record, in the transaction of its key
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the consumer
     * @throws IllegalArgumentException if the engine's key policy does not declare
     *     {@code PoisonMessageException} final, or refuses the group as a scope
     * @throws IllegalStateException if the group has a record listener already
     */
    public <K, V> IdempotentConsumer<Connection, K, V> recordListener(String group, RecordHandler<Connection, K, V> handler) {
        return recordListener(group, MessageIds.header(), handler);
    }

    /**
     * As {@link #recordListener(String, RecordHandler)}, the key id from {@code ids}.
     *
     * @param group the listener's consumer group ({@code groupId}), the scope of its keys
     * @param ids where each record's key id comes from
     * @param handler the listener's processing of one record, in the transaction of its key
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the consumer
     * @throws IllegalArgumentException if the engine's key policy does not declare
     *     {@code PoisonMessageException} final, or refuses the group as a scope
     * @throws IllegalStateException if the group has a record listener already
     */
    public <K, V> IdempotentConsumer<Connection, K, V> recordListener(String group, MessageIds<K, V> ids,
            RecordHandler<Connection, K, V> handler) {
        IdempotentConsumer<Connection, K, V> consumer = IdempotentConsumer.builder(engine, group, handler)
                .messageIds(ids).retriedByCaller().build();
        if (recordListeners.putIfAbsent(group, consumer) != null) {
            throw new IllegalStateException("The consumer group '" + group + "' has an idempotent record listener already: the "
                    + "recoverer finds a failed record's consumer by its group, so handle every topic of the group in one listener, "
                    + "or give each listener a group of its own");
        }
        return consumer;
    }

    /**
     * The builder of a batch listener's consumer: call {@link IdempotentConsumer#handleBatch} with
     * the {@code List<ConsumerRecord>} of a {@code @KafkaListener(batch = "true")} method. Its
     * attempts are its own ({@link IdempotentConsumer.Builder#maxAttempts}); give it a dead-letter
     * handler such as {@link #deadLetters}.
     *
     * @param group the listener's consumer group ({@code groupId}), the scope of its keys
     * @param handler the listener's processing of one record, in the batch's transaction
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the builder, with the message-id header and {@value #DEFAULT_MAX_ATTEMPTS} attempts
     */
    public <K, V> IdempotentConsumer.Builder<Connection, K, V> batchListener(String group, RecordHandler<Connection, K, V> handler) {
        return IdempotentConsumer.builder(engine, group, handler);
    }

    /**
     * The error handler of record listeners: {@code maxAttempts} attempts, {@code interval} apart,
     * then the {@link #recoverer} over {@code deadLetters}: {@link #errorHandler(ConsumerRecordRecoverer, RetryPolicy)}
     * with a policy of that many attempts and a constant backoff.
     *
     * @param deadLetters the recoverer that publishes to the dead-letter topic, such as a
     *     {@code DeadLetterPublishingRecoverer}
     * @param maxAttempts the attempts of a failing record, 1 to 100
     * @param interval the wait between two attempts, zero to one day
     * @return the error handler, for the container factory ({@code setCommonErrorHandler}) or as a bean
     * @throws IllegalArgumentException if {@code maxAttempts} or {@code interval} is out of range
     */
    public DefaultErrorHandler errorHandler(ConsumerRecordRecoverer deadLetters, int maxAttempts, Duration interval) {
        Objects.requireNonNull(interval, "interval");
        if (interval.isNegative()) {
            throw new IllegalArgumentException("interval must not be negative, not " + interval);
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, not " + maxAttempts);
        }
        return errorHandler(deadLetters, RetryPolicy.builder().maxAttempts(maxAttempts).backoff(interval, interval).build());
    }

    /**
     * The error handler of record listeners: the policy's {@link RetryPolicy#maxAttempts()} attempts,
     * the wait before retry {@code n} its {@link RetryPolicy#backoffBound(int) backoffBound(n)}
     * (without jitter: one consumer of the partition redelivers the record, nothing collides), then
     * the {@link #recoverer} over {@code deadLetters}. A failure recorded final at once (one the key
     * policy declares final) and a record without a message id are not tried again.
     *
     * @param deadLetters the recoverer that publishes to the dead-letter topic, such as a
     *     {@code DeadLetterPublishingRecoverer}
     * @param retry the attempts of a failing record and the waits between them
     * @return the error handler, for the container factory ({@code setCommonErrorHandler}) or as a bean
     */
    public DefaultErrorHandler errorHandler(ConsumerRecordRecoverer deadLetters, RetryPolicy retry) {
        Objects.requireNonNull(retry, "retry");
        DefaultErrorHandler handler = new DefaultErrorHandler(recoverer(deadLetters, retry.maxAttempts()), new PolicyBackOff(retry));
        handler.addNotRetryableExceptions(RecordedFailureException.class, MissingMessageIdException.class);
        return handler;
    }

    /** Spring's back-off of a {@link RetryPolicy}: its bounds, then stop after its last attempt. Thread-safe; each execution is not. */
    private record PolicyBackOff(RetryPolicy retry) implements BackOff {
        @Override
        public BackOffExecution start() {
            return new BackOffExecution() {
                private int retries;

                @Override
                public long nextBackOff() {
                    if (retries + 1 >= retry.maxAttempts()) {
                        return STOP;
                    }
                    retries++;
                    return retry.backoffBound(retries).toMillis();
                }

                @Override
                public String toString() {
                    return "PolicyBackOff[" + retry + ", retries=" + retries + "]";
                }
            };
        }
    }

    /**
     * The recoverer that the error handler calls after a record's last attempt: it hands the record
     * to {@code deadLetters} and, once that returned, records its failure as final under its key
     * (see the class comment). The record's consumer is found by the consumer group of the
     * container's thread; a record of a group without a {@link #recordListener} is only handed on.
     *
     * @param deadLetters the recoverer that publishes to the dead-letter topic
     * @param maxAttempts the attempts the error handler makes, at least 1, named in the recorded failure
     * @return the recoverer
     * @throws IllegalArgumentException if {@code maxAttempts} is less than 1
     */
    public ConsumerRecordRecoverer recoverer(ConsumerRecordRecoverer deadLetters, int maxAttempts) {
        Objects.requireNonNull(deadLetters, "deadLetters");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, not " + maxAttempts);
        }
        return (record, exception) -> {
            deadLetters.accept(record, exception);
            Throwable failure = exception instanceof ListenerExecutionFailedException && exception.getCause() != null
                    ? exception.getCause() : exception;
            if (failure instanceof RecordedFailureException || failure instanceof MissingMessageIdException) {
                return; // recorded already, or no key to record it under
            }
            recordFailure(record, maxAttempts, failure);
        };
    }

    private <K, V> void recordFailure(ConsumerRecord<K, V> record, int attempts, Throwable failure) {
        String group = KafkaUtils.getConsumerGroupId();
        @SuppressWarnings("unchecked")
        @Nullable IdempotentConsumer<Connection, K, V> consumer = group == null ? null
                : (IdempotentConsumer<Connection, K, V>) recordListeners.get(group);
        if (consumer == null) {
            log.warn("Record {}-{}@{} of group {} dead-lettered without a recorded failure: the group has no idempotent record listener",
                    record.topic(), record.partition(), record.offset(), group);
            return;
        }
        consumer.recordFailure(record, attempts, failure);
    }

    /**
     * A dead-letter handler for a batch listener's consumer, over a recoverer that publishes to the
     * dead-letter topic: called once a record's failure is final, before the commit that records it
     * (at least once: see {@link DeadLetterHandler}), and not for a replay of the recorded failure.
     *
     * @param deadLetters the recoverer, such as a {@code DeadLetterPublishingRecoverer}
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the handler
     */
    public static <K, V> DeadLetterHandler<K, V> deadLetters(ConsumerRecordRecoverer deadLetters) {
        Objects.requireNonNull(deadLetters, "deadLetters");
        return deadLetters::accept;
    }

    /**
     * Checks a listener container's settings before it starts, refusing those that may commit an
     * offset to Kafka before the database commit of its record's key:
     * <ul>
     *   <li>{@code enable.auto.commit=true} ({@code spring.kafka.consumer.enable-auto-commit}), in
     *       the consumer factory's configuration or the container's: the Kafka client then commits
     *       the position of the records it returned on a schedule of its own, which may come while
     *       the listener's transaction is still open;</li>
     *   <li>{@code AckMode.MANUAL_IMMEDIATE} ({@code spring.kafka.listener.ack-mode}): an
     *       {@code Acknowledgment} made inside the handler commits the offset at once, before the
     *       transaction of the key commits.</li>
     * </ul>
     * As a {@link ContainerCustomizer} of the container factory (the Boot auto-configuration
     * registers it), the refusal fails the application's startup. Typed as the factory's own setter
     * takes it: {@code factory.setContainerCustomizer(SpringKafkaIdempotency.offsetCommitCheck(config))}
     * on a {@code ConcurrentKafkaListenerContainerFactory<K, V>}.
     *
     * @param consumerFactoryConfig the configuration of the containers' consumer factory
     * @param <K> the record key type of the factory's containers
     * @param <V> the record value type of the factory's containers
     * @return the check; stateless and thread-safe
     */
    public static <K, V> ContainerCustomizer<K, V, ConcurrentMessageListenerContainer<K, V>> offsetCommitCheck(
            Map<String, Object> consumerFactoryConfig) {
        Map<String, Object> factory = Map.copyOf(Objects.requireNonNull(consumerFactoryConfig, "consumerFactoryConfig"));
        return container -> check(container.getListenerId(), container.getContainerProperties(), factory);
    }

    /**
     * The check of {@link #offsetCommitCheck}, for one container's settings.
     *
     * @param listener the listener's id, for the message; {@code null} if it has none
     * @param properties the container's properties
     * @param consumerFactoryConfig the configuration of its consumer factory
     * @throws IllegalStateException naming the setting, if it may commit an offset before the database commit
     */
    public static void check(@Nullable String listener, ContainerProperties properties, Map<String, Object> consumerFactoryConfig) {
        Objects.requireNonNull(properties, "properties");
        Objects.requireNonNull(consumerFactoryConfig, "consumerFactoryConfig");
        String container = listener == null ? "A listener container" : "The listener container " + listener;
        Properties overrides = properties.getKafkaConsumerProperties();
        Object autoCommit = overrides.containsKey(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG)
                ? overrides.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG)
                : consumerFactoryConfig.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
        if (autoCommit != null && Boolean.parseBoolean(autoCommit.toString())) {
            throw new IllegalStateException(container + " runs with enable.auto.commit=true "
                    + "(spring.kafka.consumer.enable-auto-commit): the Kafka client would commit the position of the records it "
                    + "returned on its own schedule, possibly before the database commit of their keys, so a crash could lose a "
                    + "record. Leave it false (Spring's default), and the container commits each offset after the listener returns");
        }
        if (properties.getAckMode() == ContainerProperties.AckMode.MANUAL_IMMEDIATE) {
            throw new IllegalStateException(container + " runs with AckMode MANUAL_IMMEDIATE "
                    + "(spring.kafka.listener.ack-mode): an acknowledgment inside the listener would commit the offset before the "
                    + "database commit of the record's key, so a crash could lose the record. Use BATCH (the default) or RECORD, "
                    + "and the container commits each offset after the listener returns");
        }
    }

    /** @return the engine */
    public ManagedIdempotency<Connection> engine() {
        return engine;
    }

    @Override
    public String toString() {
        return "SpringKafkaIdempotency[" + engine + ", record listeners of " + recordListeners.keySet() + "]";
    }
}
