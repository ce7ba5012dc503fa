package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.MissingTableException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A missing table on H2 is reported as missing even where H2 answers with another SQLState than
 * the one it gives when other tables exist: on a new, empty database (42S04) and when a table of
 * that name exists in another letter case (42S03).
 */
class H2EmptyDatabaseTest {

    private static Connection fresh(String name) throws Exception {
        Connection c = DriverManager.getConnection("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=0");
        c.setAutoCommit(false);
        return c;
    }

    @Test
    void onANewEmptyDatabaseTheFirstCallNamesTheMissingTableAndHowToCreateIt() throws Exception {
        try (Connection c = fresh("empty-" + System.nanoTime())) {
            assertThatThrownBy(() -> Idempotent.execute(IdempotencyKey.of("t", "first"), c, () -> "x"))
                    .isInstanceOf(MissingTableException.class)
                    .hasMessageContaining("idempotency_record")
                    .hasMessageContaining("dev/idempotency/jdbc/ddl/h2.sql")
                    .hasMessageContaining("createTableIfMissing");
            c.rollback();
        }
    }

    @Test
    void aTableOfTheSameNameInAnotherLetterCaseIsReportedAsMissing() throws Exception {
        try (Connection c = fresh("other-case-" + System.nanoTime())) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE \"Idempotency_Record\" (id INTEGER)");
            }
            c.commit();
            assertThatThrownBy(() -> Idempotent.execute(IdempotencyKey.of("t", "first"), c, () -> "x"))
                    .isInstanceOf(MissingTableException.class)
                    .hasMessageContaining("idempotency_record")
                    .hasMessageContaining("createTableIfMissing");
            c.rollback();
        }
    }
}
