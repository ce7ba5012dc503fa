package dev.idempotency.redis;

/** The Redis store passes the lease tier of the contract on one real server. */
class RedisStoreContractTest extends RedisContract.OnOneServer {
}
