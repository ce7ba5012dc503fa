package dev.idempotency.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

/**
 * The ids of {@link MessageIds#header(String)}: the last value of one header, read as UTF-8. Known
 * by name so that a record without it is reported naming the header. Immutable and thread-safe.
 *
 * @param name the header
 * @param <K> the record key type
 * @param <V> the record value type
 */
record HeaderMessageIds<K, V>(String name) implements MessageIds<K, V> {

    @Override
    public @Nullable String idOf(ConsumerRecord<K, V> record) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
