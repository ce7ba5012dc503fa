package dev.idempotency.dynamodb;

import java.time.InstantSource;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * DynamoDB stores each broken in one way that a DynamoDB store is easily written wrong: the correct
 * store over a client that changes one kind of request on its way to the server, or with its times
 * from the application's clock.
 */
final class BrokenDynamoDbStores {

    private BrokenDynamoDbStores() {
    }

    /**
     * The claim checks, then puts, in two calls: a consistent read finds whether the key is free
     * (no item, or an expired one), and an unconditional put writes the new claim if it was. Two
     * claims can both find it free.
     */
    static final class CheckThenPut extends ForwardingClient {
        CheckThenPut(DynamoDbClient server) {
            super(server);
        }

        @Override
        public PutItemResponse putItem(PutItemRequest request) {
            if (request.conditionExpression() == null || !request.conditionExpression().contains("attribute_not_exists")) {
                return super.putItem(request);
            }
            Map<String, AttributeValue> key = request.item().entrySet().stream().filter(e -> request.expressionAttributeNames()
                    .get("#pk").equals(e.getKey())).collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
            GetItemResponse found = server.getItem(r -> r.tableName(request.tableName()).key(key).consistentRead(true));
            long earliest = Long.parseLong(request.expressionAttributeValues().get(":earliest").n());
            boolean free = !found.hasItem() || found.item().isEmpty() || Long.parseLong(found.item().get("expires_ms").n()) <= earliest;
            if (!free) {
                return super.putItem(request); // its condition fails, as it should
            }
            return super.putItem(request.toBuilder().conditionExpression(null).expressionAttributeNames(null)
                    .expressionAttributeValues(null).returnValuesOnConditionCheckFailure((String) null).build());
        }
    }

    /**
     * Every time is the application node's clock instead of the estimate of the server's: a node
     * whose clock is ahead takes over live leases, one behind holds ended ones.
     */
    static DynamoDbLeasingStore.Builder clientClock(DynamoDbLeasingStore.Builder builder, InstantSource clock) {
        return builder.leaseClock((key, what) -> new ServerClock.Window(clock.millis(), clock.millis()));
    }

    /** The completion is not fenced by the owner token: any attempt's result is recorded over a record in progress. */
    static final class CompletionWithoutToken extends ForwardingClient {
        CompletionWithoutToken(DynamoDbClient server) {
            super(server);
        }

        @Override
        public UpdateItemResponse updateItem(UpdateItemRequest request) {
            if (request.updateExpression().contains("#completed") && DynamoDbLeasingStore.FENCE.equals(request.conditionExpression())) {
                return super.updateItem(request.toBuilder()
                        .conditionExpression("(#owner = :owner OR #owner <> :owner) AND #status = :inProgress AND #expires > :earliest").build());
            }
            return super.updateItem(request);
        }
    }
}
