package dev.idempotency.jdbc.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A dialect is a description of its database that an executor other than JDBC's (R2DBC, say) could
 * read: no public method of {@link SqlDialect}, of the built-in dialects, or of the types they
 * describe with, names a {@code java.sql} type, in its parameters, its result or their type arguments.
 */
class DialectDescriptionsTest {

    static final List<Class<?>> DESCRIPTIONS = List.of(SqlDialect.class, SqlError.class, ClaimStrategy.class,
            ChunkClaiming.class, LockWait.class, KeyLock.class, TableName.class, H2Dialect.class, HsqldbDialect.class,
            SqliteDialect.class, PostgresDialect.class, PartitionedPostgresDialect.class, MariaDbDialect.class);

    @Test
    void noPublicMethodOfADescriptionNamesAJdbcType() {
        List<String> found = new ArrayList<>();
        for (Class<?> type : DESCRIPTIONS) {
            for (Method m : type.getMethods()) {
                if (m.getDeclaringClass() == Object.class || !Modifier.isPublic(m.getModifiers())) {
                    continue;
                }
                Stream.concat(Stream.of(m.getGenericReturnType()), Stream.of(m.getGenericParameterTypes()))
                        .filter(DialectDescriptionsTest::namesJdbc)
                        .forEach(t -> found.add(type.getSimpleName() + "." + m.getName() + ": " + t.getTypeName()));
            }
        }
        assertThat(found).as("public methods that name a java.sql type").isEmpty();
    }

    @Test
    void theCheckSeesAJdbcTypeInAParameterOrATypeArgument() throws NoSuchMethodException {
        assertThat(namesJdbc(Probe.class.getMethod("run", java.sql.Connection.class).getGenericParameterTypes()[0])).isTrue();
        assertThat(namesJdbc(Probe.class.getMethod("errors").getGenericReturnType())).isTrue();
        assertThat(namesJdbc(Probe.class.getMethod("text").getGenericReturnType())).isFalse();
    }

    /** What the check must catch. */
    interface Probe {
        void run(java.sql.Connection c);

        List<java.sql.SQLException> errors();

        List<String> text();
    }

    private static boolean namesJdbc(Type type) {
        String name = type.getTypeName();
        return name.contains("java.sql.") || name.contains("javax.sql.");
    }
}
