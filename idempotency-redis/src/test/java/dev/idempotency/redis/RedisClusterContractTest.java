package dev.idempotency.redis;

/** The Redis store passes the lease tier of the contract on a real cluster of three primaries. */
class RedisClusterContractTest extends RedisContract.OnCluster {
}
