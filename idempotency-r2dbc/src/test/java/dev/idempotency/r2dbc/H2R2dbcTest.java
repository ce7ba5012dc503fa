package dev.idempotency.r2dbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.jdbc.dialect.H2Dialect;
import dev.idempotency.jdbc.dialect.TableName;
import io.r2dbc.spi.R2dbcException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The R2DBC engine's promises on H2. */
class H2R2dbcTest extends R2dbcEngineContract {

    @Override
    R2dbcDatabase database() {
        return R2dbcDatabase.H2;
    }

    /** {@link R2dbcIdempotency#createTableIfMissing}'s failure names the table, the driver's error its cause. */
    @Test
    void aTableThatCannotBeCreatedIsNamedInTheError() {
        R2dbcIdempotency engine = R2dbcIdempotency.builder(new H2Dialect()).table(TableName.of("no_such_schema.idempotency_record")).build();
        assertThatThrownBy(() -> engine.createTableIfMissing(database().factory()).block(Duration.ofSeconds(30)))
                .isInstanceOf(IdempotencyStoreException.class)
                .hasMessageContaining("could not create table 'no_such_schema.idempotency_record'")
                .cause().isInstanceOf(R2dbcException.class).hasMessageContainingAll("NO_SUCH_SCHEMA");
    }
}
