package dev.idempotency.dynamodb;

import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveResponse;

/**
 * A client that sends every request the store makes to the real one, and shares its estimate of
 * the server's clock: broken variants change one kind of request on the way.
 */
class ForwardingClient implements DynamoDbClient {
    final DynamoDbClient server;

    ForwardingClient(DynamoDbClient server) {
        this.server = server;
        DynamoDbLeasingStore.shareClock(this, server);
    }

    @Override
    public GetItemResponse getItem(GetItemRequest request) {
        return server.getItem(request);
    }

    @Override
    public PutItemResponse putItem(PutItemRequest request) {
        return server.putItem(request);
    }

    @Override
    public UpdateItemResponse updateItem(UpdateItemRequest request) {
        return server.updateItem(request);
    }

    @Override
    public CreateTableResponse createTable(CreateTableRequest request) {
        return server.createTable(request);
    }

    @Override
    public DescribeTableResponse describeTable(DescribeTableRequest request) {
        return server.describeTable(request);
    }

    @Override
    public UpdateTimeToLiveResponse updateTimeToLive(UpdateTimeToLiveRequest request) {
        return server.updateTimeToLive(request);
    }

    @Override
    public String serviceName() {
        return server.serviceName();
    }

    @Override
    public void close() {
    }
}
