package dev.idempotency.spring.boot.autoconfigure.webmvc;

import dev.idempotency.spring.webmvc.IdempotentEndpoint;
import java.util.List;
import java.util.UUID;

/** {@link IdempotentEndpoint} over HTTP on an in-memory H2 database. */
class H2IdempotentMvcTest extends AbstractIdempotentMvcTest {

    @Override
    List<String> databaseProperties() {
        return List.of("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }
}
