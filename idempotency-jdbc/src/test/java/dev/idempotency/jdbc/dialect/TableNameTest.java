package dev.idempotency.jdbc.dialect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The table name as a value: checked once, its parts, equality. */
class TableNameTest {

    @Test
    void aNameIsCheckedOnceAndKnowsItsParts() {
        TableName plain = TableName.of("idem_keys");
        assertThat(plain.qualified()).isEqualTo("idem_keys");
        assertThat(plain.simpleName()).isEqualTo("idem_keys");
        assertThat(plain.schema()).isEmpty();
        assertThat(plain).hasToString("idem_keys");

        TableName qualified = TableName.of("app.idem_keys");
        assertThat(qualified.qualified()).isEqualTo("app.idem_keys");
        assertThat(qualified.simpleName()).isEqualTo("idem_keys");
        assertThat(qualified.schema()).isEqualTo(Optional.of("app"));
        assertThat(qualified).hasToString("app.idem_keys");

        assertThat(TableName.DEFAULT.qualified()).isEqualTo(SqlDialect.DEFAULT_TABLE);
    }

    @Test
    void namesWrittenAlikeAreEqual() {
        assertThat(TableName.of("app.idem_keys")).isEqualTo(TableName.of("app.idem_keys"))
                .hasSameHashCodeAs(TableName.of("app.idem_keys"))
                .isNotEqualTo(TableName.of("idem_keys"))
                .isNotEqualTo("app.idem_keys");
    }

    @Test
    void everyPartIsCheckedForReservedWords() {
        assertThatThrownBy(() -> TableName.of("user.idem_keys")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserved word 'user'");
        assertThatThrownBy(() -> TableName.of("app.Group")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserved word 'Group'");
        assertThatThrownBy(() -> TableName.of(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("table");
    }

    @Test
    void theDdlOfEveryDialectNamesTheTableAndItsIndex() {
        TableName name = TableName.of("app.idem_keys");
        for (SqlDialect d : new SqlDialect[] {new H2Dialect(), new PostgresDialect(), new MariaDbDialect(), new SqliteDialect(),
                new HsqldbDialect()}) {
            assertThat(d.ddl(name)).as(d.name()).contains("app.idem_keys").contains("idem_keys_expires")
                    .doesNotContain("idempotency_record");
        }
    }
}
