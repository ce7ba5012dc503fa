package dev.idempotency.dynamodb;

import dev.idempotency.testsupport.TestEnvironment;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * The dynalite server of the tests, from the environment that scripts/dynalite.sh exports (a test
 * whose server is not given is skipped, or fails under CI): one client, opened on first use and
 * shared by the test classes of the run, so that they share one estimate of the server's clock.
 */
final class DynamoDbServers {

    private static DynamoDbClient client;

    private DynamoDbServers() {
    }

    /** The variable's value; a test without it is skipped, or fails under CI. */
    static String required(String variable) {
        return TestEnvironment.require(variable, "start the test server with"
                + " `env_lines=\"$(scripts/dynalite.sh start)\" && eval \"$env_lines\"` (scripts/test does it)").strip();
    }

    /** @return the shared client of the dynalite server */
    static synchronized DynamoDbClient client() {
        if (client == null) {
            client = client(required("IDEMPOTENCY_DYNALITE_ENDPOINT"));
        }
        return client;
    }

    /** @return a client of the server at {@code endpoint}, with short timeouts and the standard retries */
    static DynamoDbClient client(String endpoint) {
        return DynamoDbClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClientBuilder(UrlConnectionHttpClient.builder().connectionTimeout(Duration.ofSeconds(1))
                        .socketTimeout(Duration.ofSeconds(2)))
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(5)).retryStrategy(RetryMode.STANDARD))
                .build();
    }

    /** Deletes every item of {@code table}. */
    static void empty(DynamoDbClient client, String table, String partitionKey) {
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = client.scan(r -> r.tableName(table).exclusiveStartKey(from).consistentRead(true));
            for (Map<String, AttributeValue> item : page.items()) {
                client.deleteItem(r -> r.tableName(table).key(Map.of(partitionKey, item.get(partitionKey))));
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? new HashMap<>(page.lastEvaluatedKey()) : null;
        } while (start != null);
    }

}
