/**
 * The HTTP layer, the JDK server's handler and the retrying client. The {@code internal} package is
 * exported only to the framework adapters of this project that render its answers.
 */
module dev.idempotency.http {
    requires transitive dev.idempotency;
    requires transitive jdk.httpserver;
    requires transitive java.net.http;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.http;
    exports dev.idempotency.http.internal to dev.idempotency.spring.webmvc, dev.idempotency.spring.webflux, dev.idempotency.jakarta;
}
