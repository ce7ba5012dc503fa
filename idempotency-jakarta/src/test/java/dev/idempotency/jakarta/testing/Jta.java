package dev.idempotency.jakarta.testing;

import com.arjuna.ats.arjuna.common.arjPropertyManager;
import com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import io.agroal.narayana.NarayanaTransactionIntegration;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

/**
 * A real JTA runtime for the tests: Narayana's transaction manager, and Agroal pools that it
 * manages (a connection taken inside a transaction is enlisted in it), with a payments table.
 */
public final class Jta {

    /** The business table of the tests. */
    public static final String PAYMENTS = "jakarta_test_payment";

    private static final Object LOCK = new Object();
    private static boolean configured;

    private Jta() {
    }

    /** @return Narayana's transaction manager, its object store under target/ */
    public static TransactionManager transactionManager() {
        configure();
        return com.arjuna.ats.jta.TransactionManager.transactionManager();
    }

    /** @return Narayana's user transaction */
    public static UserTransaction userTransaction() {
        configure();
        return com.arjuna.ats.jta.UserTransaction.userTransaction();
    }

    /** @return Narayana's synchronization registry */
    public static TransactionSynchronizationRegistry registry() {
        configure();
        return new TransactionSynchronizationRegistryImple();
    }

    private static void configure() {
        synchronized (LOCK) {
            if (!configured) {
                String store = Path.of("target", "narayana-store").toAbsolutePath().toString();
                arjPropertyManager.getObjectStoreEnvironmentBean().setObjectStoreDir(store);
                com.arjuna.common.internal.util.propertyservice.BeanPopulator
                        .getNamedInstance(com.arjuna.ats.arjuna.common.ObjectStoreEnvironmentBean.class, "communicationStore")
                        .setObjectStoreDir(store);
                configured = true;
            }
        }
    }

    /**
     * @param url the JDBC URL
     * @param user the user, or {@code null}
     * @param password the password, or {@code null}
     * @param size the pool size
     * @return an Agroal pool managed by {@link #transactionManager()}, the record and payments tables created
     */
    public static AgroalDataSource dataSource(String url, String user, String password, int size) throws SQLException {
        TransactionManager tm = transactionManager();
        AgroalDataSourceConfigurationSupplier config = new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(pool -> pool
                        .maxSize(size)
                        .acquisitionTimeout(Duration.ofSeconds(30))
                        .transactionIntegration(new NarayanaTransactionIntegration(tm, registry()))
                        .connectionFactoryConfiguration(factory -> {
                            factory.jdbcUrl(url);
                            if (user != null) {
                                factory.principal(new NamePrincipal(user)).credential(new SimplePassword(password));
                            }
                            return factory;
                        }));
        AgroalDataSource dataSource = AgroalDataSource.from(config);
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(dataSource);
        createPaymentsTable(dataSource);
        return dataSource;
    }

    /** Creates the payments table on {@code dataSource} if it is missing (the Quarkus tests' application does too). */
    public static void createPaymentsTable(javax.sql.DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + PAYMENTS + " (id VARCHAR(36) PRIMARY KEY, scope VARCHAR(64) NOT NULL,"
                    + " idem_key VARCHAR(300), body VARCHAR(1000) NOT NULL)");
        }
    }

    /** Inserts a payment on {@code c}; @return its id */
    public static String insertPayment(Connection c, String scope, String key, String body) throws SQLException {
        String id = UUID.randomUUID().toString();
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + PAYMENTS + " (id, scope, idem_key, body) VALUES (?, ?, ?, ?)")) {
            insert.setString(1, id);
            insert.setString(2, scope);
            insert.setString(3, key);
            insert.setString(4, body);
            insert.executeUpdate();
        }
        return id;
    }

    /** @return the payments committed for the key */
    public static int payments(javax.sql.DataSource dataSource, String scope, String key) throws SQLException {
        return count(dataSource, "SELECT COUNT(*) FROM " + PAYMENTS + " WHERE scope = ? AND idem_key = ?", scope, key);
    }

    /** @return whether the key has a committed record */
    public static boolean recorded(javax.sql.DataSource dataSource, String scope, String key) throws SQLException {
        return count(dataSource, "SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND key_id = ?", scope, key) > 0;
    }

    private static int count(javax.sql.DataSource dataSource, String sql, String scope, String key) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement count = c.prepareStatement(sql)) {
            count.setString(1, scope);
            count.setString(2, key);
            try (ResultSet rs = count.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
