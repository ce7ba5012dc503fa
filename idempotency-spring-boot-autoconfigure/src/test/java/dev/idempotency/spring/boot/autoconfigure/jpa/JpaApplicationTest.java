package dev.idempotency.spring.boot.autoconfigure.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.spring.SpringIdempotency;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.sql.Connection;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

/**
 * A real Spring Boot application with JPA (Hibernate, Boot's {@link JpaTransactionManager}): a
 * {@code @Transactional} service persists an entity, flushed at commit, and its key commits or rolls
 * back with it; the auto-configured {@code ManagedIdempotency} runs its transactions through the same
 * manager.
 */
class JpaApplicationTest {

    @SpringBootApplication
    static class Orders {

        @Bean
        OrderService orderService(SpringIdempotency idempotency) {
            return new OrderService(idempotency);
        }
    }

    /** Places an order per key. */
    static class OrderService {

        private final SpringIdempotency idempotency;

        @PersistenceContext
        private EntityManager entityManager;

        OrderService(SpringIdempotency idempotency) {
            this.idempotency = idempotency;
        }

        @Transactional
        public Outcome<String> place(String customer, String idempotencyKey, boolean failAfter) {
            Outcome<String> outcome = idempotency.execute(IdempotencyKey.of(customer, idempotencyKey), () -> {
                String id = UUID.randomUUID().toString();
                entityManager.persist(new OrderEntity(id, customer));
                return id;
            });
            if (failAfter) {
                throw new IllegalStateException("the service fails after the order");
            }
            return outcome;
        }

        void persist(String customer) {
            entityManager.persist(new OrderEntity(UUID.randomUUID().toString(), customer));
        }
    }

    @Test
    void anEntityAndItsKeyCommitAndRollBackTogether() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Orders.class)
                .web(WebApplicationType.NONE)
                .properties("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                        "spring.jpa.hibernate.ddl-auto=create-drop", "idempotency.create-table=true",
                        "spring.main.banner-mode=off")
                .run()) {
            assertThat(context.getBean(PlatformTransactionManager.class)).isInstanceOf(JpaTransactionManager.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            OrderService orders = context.getBean(OrderService.class);

            Outcome<String> first = orders.place("alice", "k-1", false);
            Outcome<String> retry = orders.place("alice", "k-1", false);
            assertThat(retry.isReplay()).isTrue();
            assertThat(retry.value()).isEqualTo(first.value());

            assertThatThrownBy(() -> orders.place("bob", "k-2", true)).isInstanceOf(IllegalStateException.class);
            assertThat(jdbc.queryForObject("select count(*) from shop_order where customer = 'bob'", Integer.class)).isZero();
            assertThat(jdbc.queryForObject("select count(*) from idempotency_record where scope = 'bob'", Integer.class)).isZero();

            @SuppressWarnings("unchecked")
            ManagedIdempotency<Connection> managed = context.getBean(ManagedIdempotency.class);
            Outcome<String> managedOutcome = managed.execute(IdempotencyKey.of("carol", "k-3"), tx -> {
                orders.persist("carol");
                return "placed";
            });
            assertThat(managedOutcome.status()).isEqualTo(Outcome.Status.EXECUTED);

            assertThat(jdbc.queryForObject("select count(*) from shop_order where customer = 'alice'", Integer.class)).isEqualTo(1);
            assertThat(jdbc.queryForObject("select count(*) from shop_order where customer = 'carol'", Integer.class)).isEqualTo(1);
            assertThat(jdbc.queryForObject("select count(*) from idempotency_record", Integer.class)).isEqualTo(2);
        }
    }
}
