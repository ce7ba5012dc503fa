package dev.idempotency.kafka;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RecordedFailureException;
import dev.idempotency.ResultCodec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handler of a plain {@code KafkaConsumer} poll loop, made idempotent: each record is processed
 * at most once per consumer group, in the database transaction that records its key.
 *
 * <pre>{@code
 * while (running) {
 *     ConsumerRecords<String, String> records = consumer.poll(Duration.ofSeconds(1));
 *     idempotentConsumer.process(consumer, records);      // or processBatch(consumer, records)
 * }
 * }</pre>
 *
 * <p><b>Per record</b> ({@link #process}, {@link #handle}):
 * <ol>
 *   <li>The key: scope the consumer group, id from the {@link MessageIds} extractor (by default the
 *       producer's message-id header). A record without an id goes to the dead-letter handler with
 *       a {@link MissingMessageIdException}, and is not processed.</li>
 *   <li>In one transaction of {@link ManagedIdempotency#execute}: claim the key, run the
 *       {@link RecordHandler} with the transaction, record the record's position
 *       ({@code topic-partition@offset}) as the key's result, commit. The handler's writes and the
 *       key's record commit together or not at all.</li>
 *   <li>A key already recorded replays: the handler does not run. The listener of the engine hears
 *       the replay ({@code onOutcome}, {@code REPLAYED}) and its cause
 *       ({@link dev.idempotency.IdempotencyListener#onDuplicate}): {@value #REDELIVERED} if the
 *       recorded position is the record's own (the same record delivered again: a crash or a
 *       rebalance before its offset commit), {@value #SENT_AGAIN} if it is another (the same message
 *       id at another offset: a producer's retry, a second send).</li>
 *   <li>A handler that throws rolls its transaction back (the engine's listener hears its own
 *       exception, {@code onError}), and the record is tried again at once, up to
 *       {@link Builder#maxAttempts} attempts in all. On the last one, its failure is made final
 *       ({@link PoisonMessageException}) and handed to the {@link DeadLetterHandler}; its
 *       transaction is rolled back, the handler's writes with it, and the failure is recorded in a
 *       transaction of its own, where the handler does not run: the record's outcome is
 *       {@link Outcome.Failed}. (No savepoint is taken: a record that does not fail pays nothing
 *       for it.) A failure that the key policy declares final is made final at its
 *       first attempt.</li>
 *   <li>Every later delivery of the record, or of its message id, replays the recorded failure: the
 *       handler does not run, and the dead-letter handler is not called again. A crash after the
 *       hand-off and before the commit records nothing, and the next delivery hands the record off
 *       again: the hand-off is at least once, the record exactly once.</li>
 * </ol>
 * {@link #process} then commits to Kafka the next offset of each partition it processed
 * ({@code commitSync}), after every record's transaction has committed: a crash in between
 * redelivers records that replay. A commit that Kafka refuses because the group rebalanced
 * ({@link CommitFailedException}, {@link RebalanceInProgressException}) is logged and not thrown:
 * the records are recorded, and the partition's new owner replays them. An offset commit that fails
 * otherwise (the broker is down, a timeout) seeks the consumer back to the poll's first records and
 * reaches the loop: the next poll brings them again, they replay, and their offsets are committed then.
 *
 * <p><b>Per poll batch</b> ({@link #processBatch}, {@link #handleBatch}): the batch's records in one
 * transaction with the chunk protocol ({@link ManagedIdempotency#executeChunk}): one claim statement
 * for the whole batch, recorded records replaying, the handler run for the others in order. The same
 * message id twice in one batch is processed once: after the batch's transaction, each later copy
 * replays the first one's record as a second send does record by record (one more claim statement
 * for the batch's later copies): its own outcome ({@code REPLAYED}, or the replayed failure), heard
 * by the listener's {@code onOutcome} and, for a replayed value, as {@value #SENT_AGAIN}. A handler failure rolls the batch back and runs it again; each
 * record's attempts are counted, and on a record's last attempt its failure is final: the engine
 * runs the batch once more with a savepoint before each record (a batch without a final failure
 * takes none), rolls the poison record's writes back to its own and records its failure, while the
 * other records' writes and records commit in the same transaction. So a poison record never loses
 * the others' records; they are only run again, and rolled back, on the rounds before (at most
 * {@code maxAttempts} per failing record).
 *
 * <p><b>Offsets in the database</b>, optional ({@link Builder#offsets}, {@link JdbcOffsetStore}): the
 * next offset of each partition is also written in the transaction of each record's key, and the
 * consumer subscribes with {@link #rebalanceListener}, which seeks each assigned partition to its
 * stored offset. What each setting gives:
 * <ul>
 *   <li><b>Offsets in Kafka only</b> (the default): a crash, a lost offset commit or a rebalance
 *       redelivers the records processed since the last offset commit; each replays (its key is
 *       recorded), so no effect is repeated while the records are kept (the key policy's retention),
 *       and none is lost, since an offset is committed only after its record's transaction.</li>
 *   <li><b>Offsets in the database too</b>: an assigned partition restarts right after the last
 *       record whose transaction committed, whatever Kafka's committed offset says, so those events
 *       redeliver nothing at all, and do not depend on the key check; a producer's second send is
 *       still a new record, which the message-id key replays.</li>
 * </ul>
 *
 * <p><b>When a call throws</b> (the database is down, a conflict outlasted the engine's retries, the
 * dead-letter handler threw): the offsets of the records done before are committed, and the
 * consumer is sought back to the first record not done on each partition of the batch, so that the
 * next {@code poll} delivers it again; then the exception reaches the poll loop, which may go on.
 *
 * <p><b>Retried by the caller</b>, optional ({@link Builder#retriedByCaller}), for a caller that
 * retries failed records and dead-letters them itself, such as Spring for Apache Kafka's error
 * handler: {@link #handle} runs each record once, and a handler failure rolls its transaction back
 * and reaches the caller, neither retried nor recorded here. After its last attempt the caller
 * records the failure final with {@link #recordFailure}, and dead-letters the record. A record
 * whose failure is recorded replays it: its outcome is returned, and the dead-letter handler is not
 * called (the caller dead-lettered the record when it recorded the failure). A failure that the key
 * policy declares final is recorded at once and reaches the caller as the
 * {@link dev.idempotency.RecordedFailureException}; a record without a message id reaches it as the
 * {@link MissingMessageIdException}. Batches keep their attempts here ({@link #handleBatch} is not
 * offered in this mode).
 *
 * <p>Instances are immutable and thread-safe; a {@code KafkaConsumer} is not, so call
 * {@link #process} on the consumer's thread.
 *
 * @param <C> the transaction type
 * @param <K> the record key type
 * @param <V> the record value type
 */
public final class IdempotentConsumer<C, K, V> {

    /** The cause of a duplicate whose recorded position is its own: the same record delivered again. */
    public static final String REDELIVERED = "redelivered";
    /** The cause of a duplicate recorded at another position: the same message id sent again. */
    public static final String SENT_AGAIN = "sent-again";
    /** The attempts of a failing record before its failure is recorded final, by default. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;

    static final Logger log = LoggerFactory.getLogger(IdempotentConsumer.class);
    /** How many times a record whose key another member holds is tried again before the exception. */
    private static final int IN_PROGRESS_ATTEMPTS = 10;

    private final ManagedIdempotency<C> engine;
    private final String group;
    private final RecordHandler<C, K, V> handler;
    private final MessageIds<K, V> ids;
    private final int maxAttempts;
    private final DeadLetterHandler<K, V> deadLetters;
    private final KeyPolicy policy;
    private final @Nullable OffsetStore<C> offsets;
    private final boolean retriedByCaller;

    private IdempotentConsumer(Builder<C, K, V> b) {
        this.offsets = b.offsets;
        this.retriedByCaller = b.retriedByCaller;
        this.engine = b.engine;
        this.group = b.group;
        this.handler = b.handler;
        this.ids = b.ids;
        this.maxAttempts = b.maxAttempts;
        this.deadLetters = b.deadLetters;
        this.policy = b.engine.engine().keyPolicy();
    }

    /**
     * @param engine the engine: store, key policy (which must declare {@link PoisonMessageException}
     *     final), listener and transactions
     * @param group the consumer group: the scope of every key, so that each group processes each message
     * @param handler the processing of one record
     * @param <C> the transaction type
     * @param <K> the record key type
     * @param <V> the record value type
     * @return a builder with the message-id header, {@value #DEFAULT_MAX_ATTEMPTS} attempts and a
     *     logging dead-letter handler
     */
    public static <C, K, V> Builder<C, K, V> builder(ManagedIdempotency<C> engine, String group, RecordHandler<C, K, V> handler) {
        return new Builder<>(engine, group, handler);
    }

    // ---- per record ------------------------------------------------------------------------------

    /**
     * Processes a poll's records one transaction each, in order per partition, then commits their
     * offsets to Kafka (see the class comment).
     *
     * @param consumer the consumer that polled them; its thread
     * @param records the poll's records
     * @throws dev.idempotency.IdempotencyException if the store fails; the consumer was sought back
     *     to the first record not done
     * @throws RuntimeException what the dead-letter handler threw, likewise
     */
    public void process(Consumer<K, V> consumer, ConsumerRecords<K, V> records) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(records, "records");
        Map<TopicPartition, OffsetAndMetadata> done = new HashMap<>();
        List<TopicPartition> partitions = new ArrayList<>(records.partitions());
        for (int p = 0; p < partitions.size(); p++) {
            TopicPartition partition = partitions.get(p);
            for (ConsumerRecord<K, V> record : records.records(partition)) {
                try {
                    handle(record);
                } catch (RuntimeException | Error e) {
                    try {
                        commitOrRewind(consumer, done, records);
                    } catch (KafkaException commitFailed) { // sought back to the poll's first records
                        e.addSuppressed(commitFailed);
                        throw e;
                    }
                    rewind(consumer, partition, record.offset());
                    for (TopicPartition later : partitions.subList(p + 1, partitions.size())) {
                        rewind(consumer, later, records.records(later).get(0).offset());
                    }
                    throw e;
                }
                done.put(partition, new OffsetAndMetadata(record.offset() + 1));
            }
        }
        commitOrRewind(consumer, done, records);
    }

    /**
     * Processes one record in a transaction of its own, as steps 1 to 5 of the class comment; commits
     * no offset (for a poll loop of the application's own, which commits after this returns).
     *
     * @param record the record
     * @return its outcome: {@code EXECUTED}, {@code REPLAYED} or {@code FAILED} (already handed to the
     *     dead-letter handler); {@code null} for a record without a message id, already handed there
     * @throws dev.idempotency.IdempotencyException if the store fails, or another member kept the
     *     record's key for longer than every wait
     * @throws RuntimeException what the dead-letter handler threw; {@link Builder#retriedByCaller
     *     retried by the caller}: the handler's failure (a checked one in a {@link CheckedHandlerException}),
     *     a failure recorded final now, or a {@link MissingMessageIdException}
     */
    public @Nullable Outcome<String> handle(ConsumerRecord<K, V> record) {
        Objects.requireNonNull(record, "record");
        IdempotencyKey key = keyOf(record);
        if (key == null) {
            return null;
        }
        String position = position(record);
        Map<String, Failures> failures = new HashMap<>(2);
        for (int busy = 0; ; ) {
            Outcome<String> outcome;
            try {
                outcome = engine.execute(IdempotentCall.of(key, ResultCodec.string()), tx -> {
                    run(tx, record, failures);
                    saveOffset(tx, record);
                    return position;
                });
            } catch (Exception e) {
                failedAttempt(failures, e, position);
                continue;
            }
            if (outcome instanceof Outcome.InProgress && ++busy < IN_PROGRESS_ATTEMPTS) {
                continue; // another member holds the key: not an attempt of this record
            }
            answered(record, position, outcome);
            return outcome;
        }
    }

    // ---- per poll batch --------------------------------------------------------------------------

    /**
     * Processes a poll's records in one transaction with the chunk protocol, then commits their
     * offsets to Kafka (see the class comment).
     *
     * @param consumer the consumer that polled them; its thread
     * @param records the poll's records
     * @throws dev.idempotency.IdempotencyException if the store fails; the consumer was sought back
     *     to the batch's first records
     * @throws RuntimeException what the dead-letter handler threw, likewise
     */
    public void processBatch(Consumer<K, V> consumer, ConsumerRecords<K, V> records) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(records, "records");
        List<ConsumerRecord<K, V>> all = new ArrayList<>(records.count());
        records.forEach(all::add);
        try {
            handleBatch(all);
        } catch (RuntimeException | Error e) {
            for (TopicPartition partition : records.partitions()) {
                rewind(consumer, partition, records.records(partition).get(0).offset());
            }
            throw e;
        }
        Map<TopicPartition, OffsetAndMetadata> done = new HashMap<>();
        for (TopicPartition partition : records.partitions()) {
            List<ConsumerRecord<K, V>> in = records.records(partition);
            done.put(partition, new OffsetAndMetadata(in.get(in.size() - 1).offset() + 1));
        }
        commitOrRewind(consumer, done, records);
    }

    /**
     * Processes records in one transaction with the chunk protocol (see the class comment); commits
     * no offset.
     *
     * @param records the records, such as one poll's
     * @return one outcome per record, in order; {@code null} for a record without a message id
     * @throws dev.idempotency.IdempotencyException if the store fails (nothing of the batch committed)
     * @throws RuntimeException what the dead-letter handler threw (the batch had committed)
     */
    public List<@Nullable Outcome<String>> handleBatch(List<ConsumerRecord<K, V>> records) {
        Objects.requireNonNull(records, "records");
        if (retriedByCaller) {
            throw new IllegalStateException("This consumer is retried by its caller (retriedByCaller()), one record at a time: "
                    + "a batch counts its records' attempts itself, so build its consumer without retriedByCaller()");
        }
        List<List<Integer>> rounds = new ArrayList<>(); // round n: the n-th record of each message id in the batch
        Map<IdempotencyKey, Integer> copies = new HashMap<>();
        for (int i = 0; i < records.size(); i++) {
            IdempotencyKey key = keyOf(Objects.requireNonNull(records.get(i), "record"));
            if (key != null) {
                int round = copies.merge(key, 1, Integer::sum) - 1;
                if (round == rounds.size()) {
                    rounds.add(new ArrayList<>());
                }
                rounds.get(round).add(i);
            }
        }
        List<@Nullable Outcome<String>> answers = new ArrayList<>(Collections.nCopies(records.size(), null));
        Map<String, Failures> failures = new HashMap<>();
        for (List<Integer> round : rounds) { // a later round replays the earlier one's records, as a second send does
            List<ConsumerRecord<K, V>> chunk = new ArrayList<>(round.size());
            round.forEach(i -> chunk.add(records.get(i)));
            List<Outcome<String>> outcomes = chunk(chunk, failures);
            for (int j = 0; j < chunk.size(); j++) {
                ConsumerRecord<K, V> record = chunk.get(j);
                Outcome<String> outcome = outcomes.get(j);
                if (outcome instanceof Outcome.InProgress) {
                    outcome = handle(record); // another member holds it: wait for it alone
                } else {
                    answered(record, position(record), outcome);
                }
                answers.set(round.get(j), outcome);
            }
        }
        return answers;
    }

    /** One transaction of the chunk protocol over records of distinct keys, run again after each failed attempt. */
    private List<Outcome<String>> chunk(List<ConsumerRecord<K, V>> chunk, Map<String, Failures> failures) {
        while (true) { // each round ends in a commit or one more failure of one record: at most n x maxAttempts rounds
            try {
                // a chunk holds only records that have a message id (the others were dead-lettered)
                return engine.executeChunk(chunk, r -> IdempotentCall.of(Objects.requireNonNull(keyOf(r), "key"), ResultCodec.string()), (tx, r) -> {
                    run(tx, r, failures);
                    saveOffset(tx, r);
                    return position(r);
                });
            } catch (Exception e) {
                failedAttempt(failures, e, position(chunk.get(0)));
            }
        }
    }

    // ---- shared steps ----------------------------------------------------------------------------

    /**
     * The handler, in the transaction. Its failure is final on the record's last attempt (its
     * failures counted in {@code failures}, by position), or when the policy says so; a final
     * failure is handed to the dead-letter handler here, in the transaction that records it and
     * before its commit, so that a failure is never recorded without its hand-off (a crash in
     * between hands it off again on the next delivery). A record whose failure was already made
     * final in a round rolled back since (a batch run again, a conflict) is neither run nor handed
     * off again: its final failure is thrown again.
     */
    private void run(C tx, ConsumerRecord<K, V> record, Map<String, Failures> failures) throws Exception {
        String position = position(record);
        Failures before = failures.get(position);
        if (before != null && before.made() != null) {
            throw before.made();
        }
        try {
            handler.handle(tx, record);
        } catch (Exception e) {
            boolean declaredFinal = policy.isFinalFailure(e);
            if (retriedByCaller && !declaredFinal) {
                throw e; // the caller's to retry; a checked one reaches it in a CheckedHandlerException
            }
            int attempt = before == null ? 1 : before.count() + 1;
            if (attempt < maxAttempts && !declaredFinal) {
                failures.put(position, new Failures(attempt, e, null));
                throw e; // rolls the transaction back, and the engine's listener hears the handler's own failure
            }
            RuntimeException made = declaredFinal && e instanceof RuntimeException unchecked ? unchecked
                    : new PoisonMessageException(position, attempt, e);
            failures.put(position, new Failures(attempt, e, made));
            if (!retriedByCaller) { // else the caller dead-letters it, once the failure reached it
                deadLetter(record, new RecordedFailureException(IdempotencyKey.of(group, Objects.requireNonNull(ids.idOf(record), "id")), made.getClass().getName(),
                        made.getMessage()));
            }
            throw made;
        }
    }

    private void saveOffset(C tx, ConsumerRecord<K, V> record) {
        if (offsets != null) {
            offsets.save(tx, group, new TopicPartition(record.topic(), record.partition()), record.offset() + 1);
        }
    }

    /**
     * What a call of the engine threw: an attempt of a record whose handler failed, before its last
     * (the handler's own exception, noted in {@code failures}), is logged, and the caller tries again;
     * anything else (the store's failure, the handler's failure retried by the caller, the
     * dead-letter handler's) is rethrown, a checked exception (the handler's, retried by the caller)
     * in a {@link CheckedHandlerException} naming {@code position}.
     */
    private void failedAttempt(Map<String, Failures> failures, Exception thrown, String position) {
        if (!retriedByCaller) {
            for (Map.Entry<String, Failures> failed : failures.entrySet()) {
                if (failed.getValue().last() == thrown && failed.getValue().made() == null) {
                    log.info("Record {} failed attempt {} of {}; trying again", failed.getKey(), failed.getValue().count(), maxAttempts,
                            thrown);
                    return;
                }
            }
        }
        if (thrown instanceof RuntimeException unchecked) {
            throw unchecked;
        }
        throw new CheckedHandlerException(position, thrown);
    }

    /** The failed attempts of one record so far, the last failure, and the final failure made of it ({@code null} before). */
    private record Failures(int count, Exception last, @Nullable RuntimeException made) {
    }

    private void answered(ConsumerRecord<K, V> record, String position, Outcome<String> outcome) {
        if (outcome instanceof Outcome.Replayed<String> replayed) {
            engine.engine().reportDuplicate(outcome.key(), position.equals(replayed.value()) ? REDELIVERED : SENT_AGAIN);
        } else if (outcome instanceof Outcome.Failed<String> failed) {
            if (retriedByCaller && !failed.replayed()) {
                outcome.value(); // recorded now (a failure the policy declares final): throws it to the caller, which dead-letters
            }
            if (failed.replayed()) { // recorded now: handed to the dead-letter handler before its commit (run)
                log.info("Record {} replays its recorded failure ({}): dead-lettered when it was recorded", position, failed.errorType());
            }
        } else if (!(outcome instanceof Outcome.Executed)) {
            outcome.value(); // in progress past every wait, or a mismatch: throws the outcome's exception
        }
    }

    private void deadLetter(ConsumerRecord<K, V> record, Exception reason) {
        try {
            deadLetters.deadLetter(record, reason);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new DeadLetterException(position(record), e);
        }
    }

    /** @return the record's key; {@code null} (the record handed to the dead-letter handler) if it has no id */
    private @Nullable IdempotencyKey keyOf(ConsumerRecord<K, V> record) {
        String id = ids.idOf(record);
        if (id == null) {
            MissingMessageIdException missing = new MissingMessageIdException(group, record.topic(), record.partition(), record.offset(),
                    ids instanceof HeaderMessageIds<K, V> header ? header.name() : null);
            if (retriedByCaller) {
                throw missing;
            }
            deadLetter(record, missing);
            return null;
        }
        return IdempotencyKey.of(group, id);
    }

    /**
     * Commits the poll's offsets; if Kafka fails to take them (not a rebalance: a broker down, a
     * timeout), seeks back to the poll's first records, so that they come again, replay, and their
     * offsets are committed with a later poll's, then rethrows.
     */
    private void commitOrRewind(Consumer<K, V> consumer, Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerRecords<K, V> records) {
        try {
            commit(consumer, offsets);
        } catch (KafkaException e) {
            for (TopicPartition partition : records.partitions()) {
                rewind(consumer, partition, records.records(partition).get(0).offset());
            }
            throw e;
        }
    }

    /** Seeks a partition back, if the consumer still has it (a rebalance may have taken it: its new owner starts at the commit). */
    private void rewind(Consumer<K, V> consumer, TopicPartition partition, long offset) {
        if (consumer.assignment().contains(partition)) {
            consumer.seek(partition, offset);
        }
    }

    private void commit(Consumer<K, V> consumer, Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(offsets);
        } catch (CommitFailedException | RebalanceInProgressException e) {
            log.info("Offsets {} not committed ({}): the records are recorded, and their next delivery replays", offsets,
                    e.getClass().getSimpleName());
        }
    }

    /**
     * Records a record's failure as final under its key, for a consumer {@link Builder#retriedByCaller
     * retried by its caller}, after the caller's last attempt: a {@link PoisonMessageException} naming
     * the record, the attempts and the last failure, in a transaction of its own. Every later
     * delivery of the record replays the failure instead of running the handler. A key already
     * recorded (the record succeeded meanwhile, or its failure is recorded) keeps its record and
     * replays it. The dead-letter handler is not called.
     *
     * @param record the record that failed
     * @param attempts the attempts the caller made, at least 1
     * @param last the last attempt's failure
     * @return the key's outcome: {@code FAILED} as recorded now, or the replay of what it had;
     *     {@code null} for a record without a message id (nothing recorded)
     * @throws dev.idempotency.IdempotencyException if the store fails (nothing recorded)
     * @throws IllegalArgumentException if {@code attempts} is less than 1
     */
    public @Nullable Outcome<String> recordFailure(ConsumerRecord<K, V> record, int attempts, Throwable last) {
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(last, "last");
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be at least 1, not " + attempts);
        }
        String id = ids.idOf(record);
        if (id == null) {
            return null;
        }
        String position = position(record);
        return engine.execute(IdempotentCall.of(IdempotencyKey.of(group, id), ResultCodec.string()), tx -> {
            throw new PoisonMessageException(position, attempts, last);
        });
    }

    /**
     * The listener to subscribe with when offsets are kept in the database
     * ({@code kafkaConsumer.subscribe(topics, idempotentConsumer.rebalanceListener(kafkaConsumer))}):
     * on each assignment it reads the stored next offsets of the partitions and seeks the consumer
     * to them; a partition without one starts at Kafka's committed offset.
     *
     * @param consumer the consumer that subscribes with it
     * @return the listener
     * @throws IllegalStateException if the consumer was built without {@link Builder#offsets}
     */
    public ConsumerRebalanceListener rebalanceListener(Consumer<K, V> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        OffsetStore<C> store = offsets;
        if (store == null) {
            throw new IllegalStateException("This consumer keeps no offsets in the database: build it with offsets(...) first");
        }
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                store.load(group, partitions).forEach(consumer::seek);
            }

            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                // nothing to do: every processed record's offset is in the database already
            }
        };
    }

    /** @return {@code topic-partition@offset} */
    static String position(ConsumerRecord<?, ?> record) {
        return record.topic() + "-" + record.partition() + "@" + record.offset();
    }

    /** @return the consumer group, the scope of the keys */
    public String group() {
        return group;
    }

    @Override
    public String toString() {
        return "IdempotentConsumer[group=" + group + ", maxAttempts=" + maxAttempts + "]";
    }

    /** The dead-letter handler threw a checked exception: the record's offset is not committed. */
    public static final class DeadLetterException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DeadLetterException(String position, Exception cause) {
            super("The dead-letter handler failed for the record at " + position, cause);
        }
    }

    /**
     * Builds an {@link IdempotentConsumer}. Not thread-safe; the consumer it builds is.
     *
     * @param <C> the transaction type
     * @param <K> the record key type
     * @param <V> the record value type
     */
    public static final class Builder<C, K, V> {
        private final ManagedIdempotency<C> engine;
        private final String group;
        private final RecordHandler<C, K, V> handler;
        private MessageIds<K, V> ids = MessageIds.header();
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private DeadLetterHandler<K, V> deadLetters = DeadLetterHandler.logging();
        private @Nullable OffsetStore<C> offsets;
        private boolean retriedByCaller;

        private Builder(ManagedIdempotency<C> engine, String group, RecordHandler<C, K, V> handler) {
            this.engine = Objects.requireNonNull(engine, "engine");
            this.group = Objects.requireNonNull(group, "group");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * @param ids where each record's key id comes from (default {@link MessageIds#header()})
         * @return this builder
         */
        public Builder<C, K, V> messageIds(MessageIds<K, V> ids) {
            this.ids = Objects.requireNonNull(ids, "ids");
            return this;
        }

        /**
         * @param maxAttempts the attempts of a failing record, at least 1, before its failure is
         *     recorded final (default {@value IdempotentConsumer#DEFAULT_MAX_ATTEMPTS})
         * @return this builder
         */
        public Builder<C, K, V> maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, not " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param deadLetters where records go that will not be processed (default: logged and dropped)
         * @return this builder
         */
        public Builder<C, K, V> deadLetters(DeadLetterHandler<K, V> deadLetters) {
            this.deadLetters = Objects.requireNonNull(deadLetters, "deadLetters");
            return this;
        }

        /**
         * Keeps the next offset of each partition in the database, in the transaction of each
         * record's key; subscribe with {@link IdempotentConsumer#rebalanceListener} so that an
         * assigned partition starts there (see the class comment). Off by default.
         *
         * @param offsets the table of offsets, such as {@link JdbcOffsetStore}
         * @return this builder
         */
        public Builder<C, K, V> offsets(OffsetStore<C> offsets) {
            this.offsets = Objects.requireNonNull(offsets, "offsets");
            return this;
        }

        /**
         * Leaves the retries of a failed record, and its dead-lettering, to the caller (Spring for
         * Apache Kafka's error handler and its recoverer): see the class comment. The consumer's own
         * attempts ({@link #maxAttempts}) and dead-letter handler are then unused. Off by default.
         *
         * @return this builder
         */
        public Builder<C, K, V> retriedByCaller() {
            this.retriedByCaller = true;
            return this;
        }

        /**
         * @return the consumer
         * @throws IllegalArgumentException if the engine's key policy does not declare
         *     {@link PoisonMessageException} final, or refuses the group as a key scope
         */
        public IdempotentConsumer<C, K, V> build() {
            KeyPolicy policy = engine.engine().keyPolicy();
            if (!policy.isFinalFailure(new PoisonMessageException("probe-0@0", 1, new IllegalStateException("probe")))) {
                throw new IllegalArgumentException("The engine's key policy does not declare PoisonMessageException final, so a "
                        + "record that keeps failing could not be recorded as failed: build the engine with "
                        + "KeyPolicy.builder().finalFailures(PoisonMessageException.class)");
            }
            try {
                policy.validate(IdempotencyKey.of(group, "probe"));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("The consumer group '" + group + "' cannot be the scope of a key: "
                        + e.getMessage(), e);
            }
            return new IdempotentConsumer<>(this);
        }
    }
}
