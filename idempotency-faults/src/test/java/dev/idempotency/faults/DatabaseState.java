package dev.idempotency.faults;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the database holds after a run, for {@link HistoryChecker}: each key's business rows (the
 * value each execution of the work wrote) and its idempotency record.
 *
 * @param effects for each key that has any, the values of its business rows, one per committed execution;
 *     {@code null} for a store that keeps no business rows (a store without transactions, where the
 *     phases write nowhere themselves)
 * @param records for each key that has one, its record
 * @param external for a workload with effects outside the database (lease mode), the effects the
 *     external service really made for each key, one value each; {@code null} for a workload without
 */
record DatabaseState(Map<String, List<String>> effects, Map<String, Record> records, Map<String, List<String>> external) {

    /**
     * @param status the record's status ({@code IN_PROGRESS}, {@code COMPLETED}, {@code FAILED})
     * @param value the recorded result, decoded as text, or {@code null}
     */
    record Record(String status, String value) {
        Record {
            Objects.requireNonNull(status, "status");
        }
    }

    DatabaseState {
        effects = effects == null ? null : Map.copyOf(effects);
        records = Map.copyOf(records);
        external = external == null ? null : Map.copyOf(external);
    }

    /** The state of a workload whose effects are all in the database. */
    DatabaseState(Map<String, List<String>> effects, Map<String, Record> records) {
        this(effects, records, null);
    }

    List<String> effectsOf(String key) {
        return effects == null ? List.of() : effects.getOrDefault(key, List.of());
    }

    /** @return whether the workload writes business rows, to be checked against the records */
    boolean hasBusinessRows() {
        return effects != null;
    }

    /** @return whether the workload makes effects outside the database, to be checked as well */
    boolean hasExternal() {
        return external != null;
    }

    List<String> externalOf(String key) {
        return external == null ? List.of() : external.getOrDefault(key, List.of());
    }
}
