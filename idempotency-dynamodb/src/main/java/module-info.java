/**
 * Lease mode on Amazon DynamoDB, through the AWS SDK for Java 2. Exports its one package.
 */
module dev.idempotency.dynamodb {
    requires transitive dev.idempotency;
    requires transitive software.amazon.awssdk.services.dynamodb; // the store is built on a DynamoDbClient
    requires software.amazon.awssdk.core;
    requires software.amazon.awssdk.awscore;
    requires software.amazon.awssdk.http;
    requires org.slf4j;
    requires static org.jspecify; // not transitive: users compile without the annotations

    exports dev.idempotency.dynamodb;
}
