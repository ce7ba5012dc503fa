package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.redis.RedisLeasingStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configuration of the Redis store ({@link RedisLeasingStore}), when it is the choice of
 * {@link IdempotencyStoreChoice}: {@code idempotency.store=redis}, or {@code idempotency.store} unset
 * with a Lettuce {@link RedisClient} bean and no {@code DataSource}; the engine on it, for lease mode
 * and phases, is {@link IdempotencyLeaseModeAutoConfiguration}'s. Beans, each left out when the
 * application defines its own of the same type:
 *
 * <ul>
 *   <li>{@link RedisLeasingStore}, on a connection of its own (byte-array codec) from the
 *       application's one {@code RedisClient} bean, or from {@code idempotency.redis.uri} when there
 *       is none, closed with the context; {@code idempotency.redis.key-prefix},
 *       {@code idempotency.redis.wait-replicas} and {@code idempotency.redis.wait-timeout}.</li>
 * </ul>
 * A Redis Cluster: define the {@code RedisLeasingStore} bean on a cluster connection.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration" })
@ConditionalOnClass(name = { IdempotencyStoreChoice.REDIS_STORE_CLASS, IdempotencyStoreChoice.REDIS_CLIENT_CLASS })
@Conditional(IdempotencyStoreChoice.OnRedis.class)
@EnableConfigurationProperties(IdempotencyProperties.class)
public class IdempotencyRedisAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyRedisAutoConfiguration() {
    }

    /**
     * @param clients the application's Lettuce client, if it defines one
     * @param properties the settings ({@code idempotency.redis.uri} when there is no client bean)
     * @return the store's connection, closed with the context
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.store} if there is neither
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(RedisLeasingStore.class)
    RedisStoreConnection idempotencyRedisConnection(ObjectProvider<RedisClient> clients, IdempotencyProperties properties) {
        RedisClient client = clients.getIfUnique();
        String uri = properties.getRedis().getUri();
        if (client != null) {
            return new RedisStoreConnection(client.connect(ByteArrayCodec.INSTANCE), null);
        }
        if (uri == null || uri.isBlank()) {
            throw new InvalidIdempotencyPropertyException(IdempotencyStoreChoice.PROPERTY, String.valueOf(properties.getStore()),
                    "the Redis store needs a server: define one Lettuce RedisClient bean, or set idempotency.redis.uri=redis://host:port",
                    null);
        }
        RedisClient own;
        try {
            own = RedisClient.create(uri.strip());
        } catch (IllegalArgumentException e) {
            throw new InvalidIdempotencyPropertyException("idempotency.redis.uri", uri, String.valueOf(e.getMessage()), e);
        }
        try {
            return new RedisStoreConnection(own.connect(ByteArrayCodec.INSTANCE), own);
        } catch (RuntimeException e) {
            own.shutdown();
            throw e;
        }
    }

    /**
     * @param connection the store's connection
     * @param properties the settings
     * @return the Redis store
     * @throws InvalidIdempotencyPropertyException naming the {@code idempotency.redis.*} property the store refuses
     */
    @Bean
    @ConditionalOnMissingBean
    RedisLeasingStore idempotencyRedisStore(RedisStoreConnection connection, IdempotencyProperties properties) {
        IdempotencyProperties.Redis redis = properties.getRedis();
        RedisLeasingStore.Builder store = RedisLeasingStore.builder(connection.connection());
        IdempotencyProperties.set("idempotency.redis.key-prefix", redis.getKeyPrefix(), () -> store.keyPrefix(redis.getKeyPrefix()));
        if (redis.getWaitReplicas() != 0) {
            IdempotencyProperties.set("idempotency.redis.wait-replicas", redis.getWaitReplicas(),
                    () -> store.waitForReplicas(redis.getWaitReplicas(), redis.getWaitTimeout()));
        }
        return store.build();
    }

    /**
     * The Redis store's connection, and the client the auto-configuration created for it from
     * {@code idempotency.redis.uri} (an application's client bean is the application's to shut down).
     * Closed once, by the context; thread-safe, as Lettuce's connection is.
     */
    static final class RedisStoreConnection implements AutoCloseable {
        private final StatefulRedisConnection<byte[], byte[]> connection;
        private final @Nullable RedisClient own;

        RedisStoreConnection(StatefulRedisConnection<byte[], byte[]> connection, @Nullable RedisClient own) {
            this.connection = connection;
            this.own = own;
        }

        StatefulRedisConnection<byte[], byte[]> connection() {
            return connection;
        }

        @Override
        public void close() {
            connection.close();
            if (own != null) {
                own.shutdown();
            }
        }
    }
}
