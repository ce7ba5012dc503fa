package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.JdbcExecutor;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durability check of a {@link JdbcIdempotencyStore} and its copies: what each database
 * answered about durability, asked and logged once per database, keyed by the connection's JDBC URL,
 * at most {@value #MAX_DATABASES} of them (past that, one is forgotten and asked again when next
 * seen). Thread-safe.
 */
final class Durabilities {

    private static final Logger log = LoggerFactory.getLogger(JdbcIdempotencyStore.class);

    /** Databases remembered. */
    static final int MAX_DATABASES = 64;

    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    private final TableName table;
    private final DurabilityCheck durabilityCheck;

    Durabilities(TableName table, DurabilityCheck durabilityCheck) {
        this.table = table;
        this.durabilityCheck = durabilityCheck;
    }

    private Answer forDatabase(String database) {
        Answer known = answers.get(database);
        if (known != null) {
            return known;
        }
        if (answers.size() >= MAX_DATABASES) {
            answers.keySet().stream().findAny().ifPresent(answers::remove);
        }
        return answers.computeIfAbsent(database, d -> new Answer());
    }

    /** One database's answer. */
    private static final class Answer {
        /** The answer: {@code null} until asked; empty if commits are durable. */
        volatile @Nullable Optional<String> nonDurableCommits;
        /** Whether the refusal applies to the answer; set before {@link #nonDurableCommits}. */
        volatile boolean refused;
        final AtomicBoolean logged = new AtomicBoolean();
        /** The copies of the store (one per engine) that told their listener about this database. */
        final Set<JdbcIdempotencyStore> told = ConcurrentHashMap.newKeySet();
    }

    /**
     * Asks each database once whether its commits are durable; warns once per database, tells the
     * listener once per database, and refuses as the durability check says.
     */
    void check(Connection c, JdbcExecutor d, @Nullable IdempotencyKey key, JdbcIdempotencyStore store, IdempotencyListener listener) {
        Answer durable = forDatabase(databaseOf(c));
        Optional<String> answer = durable.nonDurableCommits;
        if (answer == null) {
            boolean lostWithTheApplication = false;
            try {
                answer = d.nonDurableCommits(c);
                lostWithTheApplication = answer.isPresent() && d.nonDurableCommitsDieWithTheApplication(c);
            } catch (SQLException e) {
                log.warn("Could not ask {} whether it acknowledges commits before they are durable ({}); not asked again", d.dialect().name(),
                        e.toString());
                answer = Optional.empty();
            }
            durable.refused = answer.isPresent() && durabilityCheck.refuses(lostWithTheApplication);
            durable.nonDurableCommits = answer;
            if (answer.isPresent() && durable.logged.compareAndSet(false, true)) {
                log.warn("Idempotency records in table '{}' are only as durable as the commit, and commits are not durable: {}{}",
                        table, answer.get(), durable.refused ? "; this store refuses to run (DurabilityCheck." + durabilityCheck + ")" : "");
            }
        }
        if (answer.isEmpty()) {
            return;
        }
        if (durable.told.add(store)) {
            try {
                listener.onNonDurableCommits(d.dialect().name(), answer.get());
            } catch (RuntimeException e) {
                log.warn("IdempotencyListener.onNonDurableCommits threw; ignored", e);
            }
        }
        if (durable.refused) {
            throw new NonDurableCommitsException(key, answer.get(), durabilityCheck);
        }
    }

    /** @return which database the connection is on: its JDBC URL, read from the driver's metadata */
    private static String databaseOf(Connection c) {
        try {
            return String.valueOf(c.getMetaData().getURL());
        } catch (SQLException e) {
            return "(unknown)"; // the dialect's own query reports the connection's failure
        }
    }

}
