package dev.idempotency.faults;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the database holds after a run, for {@link HistoryChecker}: each key's business rows (the
 * value each execution of the work wrote) and its idempotency record.
 *
 * @param effects for each key that has any, the values of its business rows, one per committed execution
 * @param records for each key that has one, its record
 */
record DatabaseState(Map<String, List<String>> effects, Map<String, Record> records) {

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
        effects = Map.copyOf(effects);
        records = Map.copyOf(records);
    }

    List<String> effectsOf(String key) {
        return effects.getOrDefault(key, List.of());
    }
}
