package dev.idempotency.internal;

import dev.idempotency.ResultCodec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;

/** The built-in codecs and the choice of one by a result's type. */
public final class BuiltInCodecs {

    public static final ResultCodec<Void> NONE = new Text<>("none", Void.class, v -> "", s -> null);
    public static final ResultCodec<String> STRING = new Text<>("string", String.class, s -> s, s -> s);
    public static final ResultCodec<Integer> INTEGER = new Text<>("int", Integer.class, String::valueOf, Integer::valueOf);
    public static final ResultCodec<Long> LONG = new Text<>("long", Long.class, String::valueOf, Long::valueOf);
    public static final ResultCodec<Boolean> BOOLEAN = new Text<>("boolean", Boolean.class, String::valueOf, BuiltInCodecs::parseBoolean);
    public static final ResultCodec<UUID> UUID = new Text<>("uuid", java.util.UUID.class, java.util.UUID::toString, java.util.UUID::fromString);
    public static final ResultCodec<byte[]> BYTES = new ResultCodec<>() {
        @Override
        public String name() {
            return "bytes";
        }

        @Override
        public byte[] encode(byte[] value) {
            return value.clone();
        }

        @Override
        public byte[] decode(byte[] bytes) {
            return bytes.clone();
        }

        @Override
        public String toString() {
            return "ResultCodec[bytes]";
        }
    };

    private static final List<ResultCodec<?>> ALL = List.of(NONE, STRING, BYTES, INTEGER, LONG, BOOLEAN, UUID);
    private static final Map<String, ResultCodec<?>> BY_NAME = ALL.stream().collect(Collectors.toMap(ResultCodec::name, c -> c));
    private static final Map<String, Class<?>> TYPES = Map.of(NONE.name(), Void.class, STRING.name(), String.class,
            BYTES.name(), byte[].class, INTEGER.name(), Integer.class, LONG.name(), Long.class, BOOLEAN.name(), Boolean.class,
            UUID.name(), java.util.UUID.class);

    private BuiltInCodecs() {
    }

    public static Optional<ResultCodec<?>> byName(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /** For messages: {@code codec 'int' (java.lang.Integer)}, or {@code codec 'receipt-v1'} for one not built in. */
    public static String describe(String codecName) {
        Class<?> type = TYPES.get(codecName);
        return "codec '" + codecName + "'" + (type == null ? "" : " (" + type.getTypeName() + ")");
    }

    /** For messages: what a call that decodes with {@code codec} expects. */
    public static String expectation(ResultCodec<?> codec) {
        Class<?> type = BY_NAME.get(codec.name()) == codec ? TYPES.get(codec.name()) : null;
        return type == null ? "decodes with codec '" + codec.name() + "'"
                : "expects " + type.getTypeName() + " (codec '" + codec.name() + "')";
    }

    /** The built-in codec for a non-null value's class, if there is one. */
    public static Optional<ResultCodec<?>> forValue(Object value) {
        if (value instanceof String) {
            return Optional.of(STRING);
        } else if (value instanceof byte[]) {
            return Optional.of(BYTES);
        } else if (value instanceof Integer) {
            return Optional.of(INTEGER);
        } else if (value instanceof Long) {
            return Optional.of(LONG);
        } else if (value instanceof Boolean) {
            return Optional.of(BOOLEAN);
        } else if (value instanceof java.util.UUID) {
            return Optional.of(UUID);
        }
        return Optional.empty();
    }

    /** Checks a custom codec's name: printable, short, and not one the library reserves. */
    public static String checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.length() > 64 || !name.chars().allMatch(c -> c >= '!' && c <= '~')) {
            throw new IllegalArgumentException("a codec name must be 1 to 64 printable ASCII characters without spaces, was '" + name + "'");
        }
        if (BY_NAME.containsKey(name) || name.equals(FailureRecords.CODEC)) {
            throw new IllegalArgumentException("the codec name '" + name + "' is reserved for a built-in codec; choose another,"
                    + " such as 'receipt-v1'");
        }
        return name;
    }

    private static Boolean parseBoolean(String s) {
        return switch (s) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("not a recorded boolean: '" + s + "'");
        };
    }

    private static final class Text<T> implements ResultCodec<T> {
        private final String name;
        private final Class<T> type;
        private final Function<T, String> encoder;
        private final Function<String, T> decoder;

        Text(String name, Class<T> type, Function<T, String> encoder, Function<String, T> decoder) {
            this.name = name;
            this.type = type;
            this.encoder = encoder;
            this.decoder = decoder;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public byte[] encode(T value) {
            return encoder.apply(type == Void.class ? null : type.cast(value)).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public T decode(byte[] bytes) {
            return decoder.apply(new String(bytes, StandardCharsets.UTF_8));
        }

        @Override
        public String toString() {
            return "ResultCodec[" + name + "]";
        }
    }
}
