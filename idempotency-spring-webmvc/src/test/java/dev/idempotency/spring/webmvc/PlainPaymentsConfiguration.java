package dev.idempotency.spring.webmvc;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * A Spring MVC application without Spring Boot: a data source, its transaction manager, and the
 * {@link PlainPayments} controller. The key's scope is the shop that an earlier filter (a stand-in
 * for authentication) has taken from the request.
 */
// tag::configuration[]
@Configuration
@EnableWebMvc
@EnableIdempotentEndpoints // the IdempotencyFilter bean, on this context's transaction manager and data source
class PlainPaymentsConfiguration {

    @Bean
    DataSource dataSource() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(h2); // or your migration of the table
        return h2;
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
        return new JdbcTransactionManager(dataSource);
    }

    @Bean
    PlainPayments payments(DataSource dataSource) {
        return new PlainPayments(new JdbcTemplate(dataSource));
    }

    @Bean
    IdempotencyScope scope() { // the shop that an earlier filter authenticated, in place of the principal's name
        return request -> (String) request.getAttribute(PlainPaymentsInitializer.SHOP);
    }
}
// end::configuration[]
