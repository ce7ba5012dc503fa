package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import org.junit.jupiter.api.Test;
import org.springframework.orm.jpa.SharedEntityManagerCreator;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The work persists a JPA entity, which Hibernate writes when it flushes at commit, in transactions
 * of a {@code JpaTransactionManager}: the record, written through the connection Spring exposes
 * from Hibernate's session, commits and rolls back with it.
 */
abstract class AbstractJpaTransactionTest extends AbstractSpringIdempotencyTest {

    EntityManagerFactory emf;
    EntityManager entityManager;

    @Override
    PlatformTransactionManager createTransactionManager() {
        emf = Jpa.entityManagerFactory(pool, getClass().getSimpleName());
        entityManager = SharedEntityManagerCreator.createSharedEntityManager(emf);
        return Jpa.transactionManager(emf);
    }

    @Override
    void closeTransactionManager() {
        emf.close();
    }

    @Override
    void writePayment(String id, long cents) {
        entityManager.persist(new PaymentEntity(id, cents));
    }

    @Test
    void anEntityAndTheKeyCommitTogether_andTheRetryReplays() {
        IdempotencyKey key = IdempotencyKey.of(scope, "order-17");
        String paymentId = scope + "-jpa";
        for (int attempt = 0; attempt < 2; attempt++) {
            // tag::jpa[]
            Outcome<String> outcome = transactions.execute(status -> idempotency.execute(key, () -> {
                entityManager.persist(new PaymentEntity(paymentId, 1250)); // flushed by Hibernate at commit, with the record
                return paymentId;
            }));
            // end::jpa[]
            assertThat(outcome.value()).isEqualTo(paymentId);
            assertThat(outcome.isReplay()).isEqualTo(attempt == 1);
        }
        assertThat(payments(paymentId)).isEqualTo(1);
    }

    @Test
    void theEntityIsWrittenAtCommit_afterTheRecord_inTheSameTransaction() {
        IdempotencyKey key = IdempotencyKey.of(scope, "jpa-1");
        String id = scope + "-p1";
        Outcome<Integer> outcome = transactions.execute(status -> {
            Outcome<Integer> o = idempotency.execute(key, () -> {
                writePayment(id, 990);
                // Not flushed yet: the row is not in the database while the record is written.
                return jdbc.queryForObject("select count(*) from spring_payment where id = ?", Integer.class, id);
            });
            assertThat(records(key)).as("the record, seen inside the transaction").isEqualTo(1);
            return o;
        });
        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(outcome.value()).as("rows visible inside the work, before the flush").isZero();
        assertThat(payments(id)).isEqualTo(1);
        assertThat(entityManager.getEntityManagerFactory().createEntityManager().find(PaymentEntity.class, id).cents())
                .isEqualTo(990);
    }
}
