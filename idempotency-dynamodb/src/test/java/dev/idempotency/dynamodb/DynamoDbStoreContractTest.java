package dev.idempotency.dynamodb;

/** The DynamoDB store passes the lease tier of the contract on dynalite, in the library's table layout. */
class DynamoDbStoreContractTest extends DynamoDbContract {
}
