/**
 * The DynamoDB store of lease mode: {@link dev.idempotency.dynamodb.DynamoDbLeasingStore}, on the
 * AWS SDK for Java 2, each primitive one conditional write, its times judged by an estimate of the
 * server's clock.
 */
package dev.idempotency.dynamodb;
