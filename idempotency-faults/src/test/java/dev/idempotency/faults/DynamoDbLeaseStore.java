package dev.idempotency.faults;

import dev.idempotency.ResultCodec;
import dev.idempotency.dynamodb.DynamoDbLeasingStore;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
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
 * A DynamoDB server (dynalite, from scripts/dynalite.sh) as the store of lease mode
 * ({@link DynamoDbLeasingStore}): no transaction, so the workload keeps no business rows; the
 * prepare's value lives in the recovery point the store keeps with the claim, and the service's
 * answer in the completed record ({@link LeaseWorkload#phasesOutside}).
 *
 * <p>The records are read for the check as the store lays them out (its class comment and
 * {@link dev.idempotency.dynamodb.TableLayout#LIBRARY}): one item per record, partition key
 * {@code pk} = {@code prefix#<scope length>:<scope>:<id>}, the status's name in {@code status} and
 * the encoded result in {@code result}; read by a consistent scan of the table.
 *
 * @param endpoint the server, {@code http://host:port}
 */
record DynamoDbLeaseStore(String endpoint) implements LeaseStore {

    /** How {@link #address()} marks a DynamoDB endpoint for {@link LeaseStore#at}. */
    static final String SCHEME = "dynamodb+";

    private static final String TABLE = "faults_leases";
    private static final String PREFIX = "faults";

    @Override
    public String name() {
        return "DynamoDB";
    }

    @Override
    public List<String> address() {
        return List.of(SCHEME + endpoint, "-", "-");
    }

    @Override
    public Opened open(int connections) {
        DynamoDbClient client = DynamoDbClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClientBuilder(UrlConnectionHttpClient.builder().connectionTimeout(Duration.ofSeconds(1))
                        .socketTimeout(Duration.ofSeconds(2)))
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(5)).retryStrategy(RetryMode.STANDARD))
                .build();
        DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(client, TABLE).keyPrefix(PREFIX).build();
        return new Opened() {
            @Override
            public void createTables() {
                store.createTableIfMissing();
            }

            @Override
            public FaultClient.Factory clients(String scope, Path runDir, Duration lease) {
                return LeaseStore.clientsOutside(store, scope, runDir, lease);
            }

            @Override
            public DatabaseState read(String scope, ExternalEffects service) {
                String start = PREFIX + "#" + scope.length() + ":" + scope + ":";
                Map<String, DatabaseState.Record> records = new HashMap<>();
                Map<String, AttributeValue> from = null;
                do {
                    Map<String, AttributeValue> after = from;
                    ScanResponse page = client.scan(r -> r.tableName(TABLE).consistentRead(true).exclusiveStartKey(after)
                            .filterExpression("begins_with(pk, :start)")
                            .expressionAttributeValues(Map.of(":start", AttributeValue.fromS(start))));
                    for (Map<String, AttributeValue> item : page.items()) {
                        AttributeValue result = item.get("result");
                        records.put(item.get("pk").s().substring(start.length()), new DatabaseState.Record(item.get("status").s(),
                                result == null ? null : decode(result.b().asByteArray())));
                    }
                    from = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? new HashMap<>(page.lastEvaluatedKey()) : null;
                } while (from != null);
                return new DatabaseState(null, records, service.made());
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private static String decode(byte[] result) {
        try {
            return ResultCodec.string().decode(result);
        } catch (Exception e) {
            throw new IllegalStateException("a recorded result is not text", e);
        }
    }

    @Override
    public String toString() {
        return name();
    }
}
