package dev.idempotency.faults;

import dev.idempotency.faults.HistoryEvent.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Checks the histories of a run against the guarantee (docs/contract.md, sections 3 and 7),
 * Jepsen-style: what the clients were told, set against what the database holds once every fault is
 * over.
 *
 * <ol>
 *   <li><b>At most once:</b> no key has more than one business row (its work committed at most once).</li>
 *   <li><b>Nothing acknowledged lost:</b> every value a client was answered with for a key
 *       ({@link Type#ACK}: its commit returned) is the one the key's {@code COMPLETED} record and its
 *       business row hold; each value answered but not held counts once.</li>
 *   <li><b>Retries replay:</b> all answers for one key carry the same value, and at most one of them
 *       says the work ran ({@code EXECUTED}); the others are replays.</li>
 *   <li><b>Nothing half-written:</b> a business row has its completed record, and a completed record
 *       its business row, with the same value (for a workload that writes business rows: a store
 *       without transactions keeps none, and its completed records are checked against the effects
 *       outside).</li>
 *   <li><b>Effects outside the database once</b> (lease mode): the external service made at most one
 *       effect per key, and a completed key's effect is the one its record holds; no effect for a key
 *       whose record is not completed.</li>
 *   <li><b>Nothing stuck:</b> no record is left {@code IN_PROGRESS} once its holders are gone.</li>
 *   <li><b>No surprise:</b> every exception that reached a client is of an expected type.</li>
 * </ol>
 *
 * <p>Stateless and thread-safe.
 */
final class HistoryChecker {

    private final Predicate<String> expectedFailure;

    /** @param expectedFailure whether an exception class name that reached a client is an expected one */
    HistoryChecker(Predicate<String> expectedFailure) {
        this.expectedFailure = expectedFailure;
    }

    /** @return the report; {@link Report#violations()} lists every broken promise */
    Report check(List<HistoryEvent> history, DatabaseState state) {
        List<String> violations = new ArrayList<>();
        Map<String, List<HistoryEvent>> acks = new TreeMap<>();
        Map<String, Integer> failures = new TreeMap<>();
        Set<String> keys = new TreeSet<>();
        int invokes = 0;
        int busy = 0;
        for (HistoryEvent e : history) {
            keys.add(e.key());
            switch (e.type()) {
                case INVOKE -> invokes++;
                case ACK -> acks.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
                case BUSY -> busy++;
                case FAIL -> {
                    failures.merge(e.detail(), 1, Integer::sum);
                    if (!expectedFailure.test(e.detail())) {
                        violations.add("unexpected exception: key " + e.key() + " (client " + e.client() + ") got " + e.detail());
                    }
                }
            }
        }
        if (state.hasBusinessRows()) {
            keys.addAll(state.effects().keySet());
        }
        keys.addAll(state.records().keySet());
        if (state.hasExternal()) {
            keys.addAll(state.external().keySet());
        }
        int duplicates = 0;
        int externalDuplicates = 0;
        int lost = 0;
        int stuck = 0;
        int executedAcks = 0;
        int replayedAcks = 0;
        for (String key : keys) {
            List<String> effects = state.effectsOf(key);
            DatabaseState.Record record = state.records().get(key);
            if (effects.size() > 1) {
                duplicates++;
                violations.add("duplicate: key " + key + " has " + effects.size() + " business rows " + effects);
            }
            if (record != null && record.status().equals("IN_PROGRESS")) {
                stuck++;
                violations.add("stuck: key " + key + " is left IN_PROGRESS");
            }
            boolean completed = record != null && record.status().equals("COMPLETED");
            if (!effects.isEmpty() && !completed) {
                violations.add("half-written: key " + key + " has a business row " + effects + " but its record is " + record);
            }
            if (state.hasBusinessRows() && completed && effects.isEmpty()) {
                violations.add("half-written: key " + key + " has a completed record (" + record.value() + ") but no business row");
            }
            if (completed && !effects.isEmpty() && !effects.contains(record.value())) {
                violations.add("half-written: key " + key + " records " + record.value() + " but its business row holds " + effects);
            }
            List<String> external = state.externalOf(key);
            if (external.size() > 1) {
                externalDuplicates++;
                violations.add("external effect repeated: key " + key + " made " + external.size() + " effects outside the database " + external);
            }
            if (state.hasExternal() && completed && !external.contains(record.value())) {
                violations.add("half-written: key " + key + " records " + record.value() + " but the external effects are " + external);
            }
            if (!external.isEmpty() && !completed) {
                violations.add("half-written: key " + key + " made the external effect " + external + " but its record is " + record);
            }
            List<HistoryEvent> answers = acks.getOrDefault(key, List.of());
            if (answers.isEmpty()) {
                continue;
            }
            Set<String> values = new TreeSet<>();
            long executed = 0;
            for (HistoryEvent a : answers) {
                values.add(a.value());
                executed += a.executed() ? 1 : 0;
            }
            executedAcks += (int) executed;
            replayedAcks += answers.size() - (int) executed;
            if (values.size() > 1) {
                violations.add("retry not replayed: key " + key + " was answered with different values " + values);
            }
            if (executed > 1) {
                violations.add("executed twice: key " + key + " was answered EXECUTED " + executed + " times");
            }
            for (String told : values) {
                if (!completed || !told.equals(record.value()) || (state.hasBusinessRows() && !effects.contains(told))
                        || (state.hasExternal() && !external.contains(told))) {
                    lost++;
                    violations.add("acknowledged lost: key " + key + " was answered " + told + " but the database holds record " + record
                            + " and business rows " + effects + (state.hasExternal() ? ", the external effects are " + external : ""));
                }
            }
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        counts.put("keys", keys.size());
        counts.put("attempts", invokes);
        counts.put("executed answers", executedAcks);
        counts.put("replayed answers", replayedAcks);
        counts.put("busy answers", busy);
        counts.put("failed attempts", failures.values().stream().mapToInt(Integer::intValue).sum());
        counts.put("indeterminate attempts", Math.max(0, invokes - executedAcks - replayedAcks - busy
                - failures.values().stream().mapToInt(Integer::intValue).sum()));
        counts.put("duplicates", duplicates);
        if (state.hasExternal()) {
            counts.put("external effects", state.external().values().stream().mapToInt(List::size).sum());
            counts.put("external duplicates", externalDuplicates);
        }
        counts.put("acknowledged lost", lost);
        counts.put("stuck", stuck);
        return new Report(counts, failures, violations);
    }

    /**
     * @param counts figures of the run: keys, attempts, answers, duplicates, acknowledged lost, stuck
     * @param failures how many times each exception class reached a client
     * @param violations every broken promise, one sentence each; empty when the run kept the guarantee
     */
    record Report(Map<String, Integer> counts, Map<String, Integer> failures, List<String> violations) {

        boolean ok() {
            return violations.isEmpty();
        }

        @Override
        public String toString() {
            return counts + ", exceptions " + failures + (violations.isEmpty() ? ", no violation"
                    : ", " + violations.size() + " violations:\n  " + String.join("\n  ", violations.subList(0, Math.min(20, violations.size()))));
        }
    }
}
