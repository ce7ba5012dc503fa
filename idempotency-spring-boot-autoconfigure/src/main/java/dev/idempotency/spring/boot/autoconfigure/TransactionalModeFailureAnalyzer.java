package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.Idempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.SpringIdempotency;
import java.sql.Connection;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;

/**
 * With {@code idempotency.store} set to a lease-only store ({@code redis}, {@code dynamodb}), a bean
 * of transactional mode that the application asks for ({@link SpringIdempotency},
 * {@link JdbcIdempotencyStore}, {@code Idempotency}, {@code ManagedIdempotency})
 * does not exist: a store outside the database cannot record a key in the database's transaction. This turns Boot's "no qualifying bean" into that reason and what to do,
 * ahead of Boot's own analysis of a missing bean.
 *
 * <p>Thread-safe: it keeps only the environment, which it reads.
 */
final class TransactionalModeFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException> implements Ordered {

    private static final Set<Class<?>> JDBC_ONLY = Set.of(SpringIdempotency.class, JdbcIdempotencyStore.class);
    private static final Set<Class<?>> ENGINES_OF_A_TRANSACTIONAL_STORE = Set.of(Idempotency.class, ManagedIdempotency.class);
    private static final Set<Class<?>> ON_A_CONNECTION = Set.of(RecoveryWorker.class);

    private final Environment environment;

    TransactionalModeFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
        IdempotencyStoreChoice.LeaseOnly store = IdempotencyStoreChoice.LeaseOnly.named(IdempotencyStoreChoice.chosen(environment));
        if (store == null || !transactional(cause.getResolvableType())) {
            return null;
        }
        String description = "The application asks for a bean of transactional mode, " + cause.getResolvableType()
                + ", but idempotency.store=" + store.value + " chose " + store.title + ", which serves lease mode only: a key kept"
                + " outside the database cannot be recorded inside the database transaction of the business change, so the"
                + " auto-configuration builds no transactional bean on it.";
        String action = "Use lease mode on " + store.title + " (inject LeasedIdempotency<NoTransaction>: lease, phases), or set"
                + " idempotency.store=jdbc (or leave it unset, with one DataSource) for transactional mode on the JDBC store.";
        return new FailureAnalysis(description, action, cause);
    }

    private static boolean transactional(@Nullable ResolvableType type) {
        if (type == null) {
            return false;
        }
        Class<?> raw = type.resolve();
        if (raw == null) {
            return false;
        }
        if (JDBC_ONLY.contains(raw)) {
            return true;
        }
        if (ENGINES_OF_A_TRANSACTIONAL_STORE.contains(raw)) {
            return true; // whatever its transaction type: a lease-only store is no TransactionalStore
        }
        return ON_A_CONNECTION.contains(raw) && Connection.class.equals(type.getGeneric(0).resolve());
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
