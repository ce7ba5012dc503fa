package dev.idempotency.redis;

/**
 * The Lua scripts of {@link RedisLeasingStore}: one per lease primitive, each run atomically by the
 * server on the one Redis key that holds a record. Every time is the server's own, read with
 * {@code TIME} inside the script, in milliseconds since the epoch.
 *
 * <p>A record is a hash with the fields {@code s} (status: {@code P} in progress, {@code C}
 * completed, {@code F} failed), {@code fp} (fingerprint), {@code o} (owner token, while in
 * progress), {@code a} (attempts), {@code l} (lease end), {@code c} (created), {@code d} (completed),
 * {@code x} (expiry, also the key's own {@code PEXPIREAT}), {@code k} and {@code r} (codec and
 * result, {@code r} absent for a {@code null} result), {@code pc} and {@code ps} (the recovery point's
 * codec and state, {@code ps} absent for a {@code null} state). A record whose expiry has come counts
 * as absent even before the server deletes its key.
 */
final class LeaseScripts {

    private LeaseScripts() {
    }

    /** The server's now in milliseconds, and the record read into the table {@code r}. */
    static final String READ = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local h = redis.call('HGETALL', KEYS[1])
            local r = {}
            for i = 1, #h, 2 do r[h[i]] = h[i + 1] end
            local live = r.s ~= nil and tonumber(r.x) > now
            """;

    /** The fence of every primitive but the claim: a live record in progress held by {@code ARGV[1]}. */
    private static final String FENCE = READ + """
            if not live or r.s ~= 'P' or r.o ~= ARGV[1] then return {} end
            """;

    /**
     * The claim. ARGV: fingerprint, owner token, lease (ms), retention (ms). Answers
     * {@code {'A', now, leaseUntil, attempt, pointCodec|false, pointState|false}},
     * {@code {'H', now, fingerprint, leaseUntil, attempts, expires|false}} or
     * {@code {'E', now, status, fingerprint, codec, result|false, created, completed, expires}}.
     */
    static final String CLAIM = READ + """
            local lease = tonumber(ARGV[3])
            local retention = tonumber(ARGV[4])
            if not live then
              redis.call('DEL', KEYS[1])
              redis.call('HSET', KEYS[1], 's', 'P', 'fp', ARGV[1], 'o', ARGV[2], 'a', 1, 'l', now + lease, 'c', now, 'x', now + retention)
              redis.call('PEXPIREAT', KEYS[1], now + retention)
              return {'A', now, now + lease, 1, false, false}
            end
            if r.s ~= 'P' then
              return {'E', now, r.s, r.fp, r.k, r.r or false, r.c, r.d, r.x}
            end
            if r.fp ~= ARGV[1] or tonumber(r.l) > now then
              return {'H', now, r.fp, r.l, r.a, r.x or false}
            end
            local attempt = tonumber(r.a) + 1
            redis.call('HSET', KEYS[1], 'o', ARGV[2], 'a', attempt, 'l', now + lease, 'x', now + retention)
            redis.call('PEXPIREAT', KEYS[1], now + retention)
            return {'A', now, now + lease, attempt, r.pc or false, r.ps or false}
            """;

    /** The extension. ARGV: owner token, lease (ms). Answers {leaseUntil}, or {} if the token does not hold the record. */
    static final String EXTEND = FENCE + """
            redis.call('HSET', KEYS[1], 'l', now + tonumber(ARGV[2]))
            return {now + tonumber(ARGV[2])}
            """;

    /** The checkpoint. ARGV: owner token, codec, '1' if there is a state, the state. Answers {1}, or {}. */
    static final String CHECKPOINT = FENCE + """
            redis.call('HSET', KEYS[1], 'pc', ARGV[2])
            if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'ps', ARGV[4]) else redis.call('HDEL', KEYS[1], 'ps') end
            return {1}
            """;

    /**
     * The fenced completion. ARGV: owner token, status ({@code C} or {@code F}), codec, '1' if there
     * is a result, the result, retention (ms). Answers {completedAt}, or {}.
     */
    static final String COMPLETE = FENCE + """
            local expires = now + tonumber(ARGV[6])
            redis.call('HSET', KEYS[1], 's', ARGV[2], 'k', ARGV[3], 'd', now, 'x', expires)
            if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'r', ARGV[5]) else redis.call('HDEL', KEYS[1], 'r') end
            redis.call('HDEL', KEYS[1], 'o', 'l', 'pc', 'ps')
            redis.call('PEXPIREAT', KEYS[1], expires)
            return {now}
            """;

    /** The release: ends the lease now, keeping owner, attempts and recovery point. ARGV: owner token. Answers {1}, or {}. */
    static final String RELEASE = FENCE + """
            redis.call('HSET', KEYS[1], 'l', now)
            return {1}
            """;

    /** The withdrawal of a claim: deletes the record. ARGV: owner token. Answers {1}, or {}. */
    static final String WITHDRAW = FENCE + """
            redis.call('DEL', KEYS[1])
            return {1}
            """;
}
