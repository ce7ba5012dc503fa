package dev.idempotency.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.jdbc.dialect.TableName;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one translation of the dialects' {@code ?} parameters, and the split of a text of several statements. */
class PlaceholdersTest {

    @Test
    void parametersAreNumberedInOrderAndQuotedTextIsLeftAlone() {
        String sql = "SELECT '?', \"a?b\" FROM t WHERE a = ? AND b = '' || ? AND c = `?`";
        assertThat(Placeholders.DOLLAR_NUMBERED.translate(sql))
                .isEqualTo("SELECT '?', \"a?b\" FROM t WHERE a = $1 AND b = '' || $2 AND c = `?`");
        assertThat(Placeholders.QUESTION_MARKS.translate(sql)).isEqualTo(sql);
        assertThat(Placeholders.count(sql)).isEqualTo(2);
    }

    @Test
    void postgresqlsClaimIsThreeStatementsWhoseParametersFollowEachOther() {
        String claim = new PostgresDialect().claimStatement(TableName.DEFAULT, Duration.ofSeconds(5));
        List<String> statements = Placeholders.statements(claim);
        assertThat(statements).hasSize(3);
        assertThat(statements.stream().map(Placeholders::count)).containsExactly(0, 6, 2);
        assertThat(Placeholders.statements("a; 'b;c' ;")).containsExactly("a", "'b;c'");
    }
}
