package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.dynamodb.DynamoDbLeasingStore;
import dev.idempotency.dynamodb.TableLayout;
import java.net.URI;
import java.util.Locale;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

/**
 * Auto-configuration of the DynamoDB store ({@link DynamoDbLeasingStore}), when it is the choice of
 * {@link IdempotencyStoreChoice}: {@code idempotency.store=dynamodb}, or {@code idempotency.store}
 * unset with an AWS SDK {@link DynamoDbClient} bean and no {@code DataSource}; the engine on it, for
 * lease mode and phases, is {@link IdempotencyLeaseModeAutoConfiguration}'s. Beans, each left out
 * when the application defines its own of the same type:
 *
 * <ul>
 *   <li>{@link DynamoDbLeasingStore} on the table {@code idempotency.table}, over the application's
 *       one {@code DynamoDbClient} bean, or over a client of its own, closed with the context, built
 *       by the SDK's defaults (credentials, region and HTTP client as the SDK finds them) with
 *       {@code idempotency.dynamodb.region} and {@code idempotency.dynamodb.endpoint} when set;
 *       {@code idempotency.dynamodb.layout}, {@code idempotency.dynamodb.key-prefix} and
 *       {@code idempotency.dynamodb.clock-calibration}. With {@code idempotency.create-table=true} the
 *       table is created at startup if it is missing (for development: production tables belong in
 *       the infrastructure's definitions).</li>
 * </ul>
 * Building the store calibrates its estimate of the server's clock (up to
 * {@code idempotency.dynamodb.clock-calibration}, 3 seconds by default, once per client): a server
 * that cannot be reached ends it quietly, and the first calls then say so.
 */
@AutoConfiguration
@ConditionalOnClass(name = { IdempotencyStoreChoice.DYNAMODB_STORE_CLASS, IdempotencyStoreChoice.DYNAMODB_CLIENT_CLASS })
@Conditional(IdempotencyStoreChoice.OnDynamoDb.class)
@EnableConfigurationProperties(IdempotencyProperties.class)
public class IdempotencyDynamoDbAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyDynamoDbAutoConfiguration() {
    }

    /**
     * @param clients the application's DynamoDB client, if it defines one
     * @param properties the settings ({@code idempotency.dynamodb.region} and {@code endpoint} when there is none)
     * @return the store's client, closed with the context if the auto-configuration built it
     * @throws InvalidIdempotencyPropertyException naming the property the SDK refuses
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(DynamoDbLeasingStore.class)
    DynamoDbStoreClient idempotencyDynamoDbClient(ObjectProvider<DynamoDbClient> clients, IdempotencyProperties properties) {
        DynamoDbClient client = clients.getIfUnique();
        if (client != null) {
            return new DynamoDbStoreClient(client, false);
        }
        IdempotencyProperties.DynamoDb settings = properties.getDynamodb();
        DynamoDbClientBuilder builder = DynamoDbClient.builder();
        String region = settings.getRegion();
        if (region != null && !region.isBlank()) {
            builder.region(Region.of(region.strip()));
        }
        String endpoint = settings.getEndpoint();
        if (endpoint != null && !endpoint.isBlank()) {
            URI uri;
            try {
                uri = URI.create(endpoint.strip());
            } catch (IllegalArgumentException e) {
                throw new InvalidIdempotencyPropertyException("idempotency.dynamodb.endpoint", endpoint, String.valueOf(e.getMessage()), e);
            }
            if (uri.getScheme() == null || uri.getHost() == null) {
                throw new InvalidIdempotencyPropertyException("idempotency.dynamodb.endpoint", endpoint,
                        "must be an absolute URI with a scheme and a host, such as http://localhost:8000", null);
            }
            builder.endpointOverride(uri);
        }
        try {
            return new DynamoDbStoreClient(builder.build(), true);
        } catch (SdkException | IllegalArgumentException e) {
            throw new InvalidIdempotencyPropertyException("idempotency.dynamodb.region", String.valueOf(region), "the DynamoDB client could not be built (" + e.getMessage() + "): define a DynamoDbClient"
                    + " bean, or set idempotency.dynamodb.region (and idempotency.dynamodb.endpoint for a server other than AWS's)", e);
        }
    }

    /**
     * @param client the store's client
     * @param properties the settings
     * @return the DynamoDB store, its table created first with {@code idempotency.create-table=true}
     * @throws InvalidIdempotencyPropertyException naming the property the store refuses
     */
    @Bean
    @ConditionalOnMissingBean
    DynamoDbLeasingStore idempotencyDynamoDbStore(DynamoDbStoreClient client, IdempotencyProperties properties) {
        IdempotencyProperties.DynamoDb settings = properties.getDynamodb();
        DynamoDbLeasingStore.Builder[] store = new DynamoDbLeasingStore.Builder[1];
        IdempotencyProperties.set("idempotency.table", properties.getTable(),
                () -> store[0] = DynamoDbLeasingStore.builder(client.client(), properties.getTable()));
        store[0].layout(layout(settings.getLayout()));
        IdempotencyProperties.set("idempotency.dynamodb.key-prefix", settings.getKeyPrefix(), () -> store[0].keyPrefix(settings.getKeyPrefix()));
        IdempotencyProperties.set("idempotency.dynamodb.clock-calibration", settings.getClockCalibration(),
                () -> store[0].clockCalibration(settings.getClockCalibration()));
        DynamoDbLeasingStore built = store[0].build();
        if (properties.isCreateTable()) {
            built.createTableIfMissing();
        }
        return built;
    }

    private static TableLayout layout(String written) {
        String value = written == null ? "" : written.strip().toUpperCase(Locale.ROOT).replace('-', '_');
        for (TableLayout layout : TableLayout.values()) {
            if (layout.name().equals(value)) {
                return layout;
            }
        }
        throw new InvalidIdempotencyPropertyException("idempotency.dynamodb.layout", String.valueOf(written),
                "must be library (the store's own attribute names) or powertools (those of AWS Lambda Powertools' table)", null);
    }

    /**
     * The DynamoDB store's client, and whether the auto-configuration built it (an application's
     * client bean is the application's to close). Closed once, by the context; thread-safe, as the
     * SDK's client is.
     */
    static final class DynamoDbStoreClient implements AutoCloseable {
        private final DynamoDbClient client;
        private final boolean own;

        DynamoDbStoreClient(DynamoDbClient client, boolean own) {
            this.client = client;
            this.own = own;
        }

        DynamoDbClient client() {
            return client;
        }

        @Override
        public void close() {
            if (own) {
                client.close();
            }
        }

        @Override
        public String toString() {
            return "DynamoDbStoreClient[" + (own ? "built from idempotency.dynamodb.*" : "the application's bean") + "]";
        }
    }
}
