package dev.idempotency.redis;

import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;

/**
 * Redis stores each broken in one way that a Redis store is easily written wrong: the correct store
 * over a node that changes one thing on the way to the server.
 */
final class BrokenRedisStores {

    private BrokenRedisStores() {
    }

    private static final String SERVER_TIME = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            """;

    /**
     * The claim checks, then sets, in two calls: one script reads whether the key is free, and a
     * second writes the new claim if it was. Two claims can both find it free.
     */
    static final class CheckThenSet extends RewritingNode {
        private static final String IS_FREE = LeaseScripts.READ + "return {live and 0 or 1}\n";
        private static final String TAKE = SERVER_TIME + """
                redis.call('DEL', KEYS[1])
                redis.call('HSET', KEYS[1], 's', 'P', 'fp', ARGV[1], 'o', ARGV[2], 'a', 1, 'l', now + tonumber(ARGV[3]), 'c', now,
                    'x', now + tonumber(ARGV[4]))
                redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
                return {'A', now, now + tonumber(ARGV[3]), 1, false, false}
                """;

        CheckThenSet(RedisNode server) {
            super(server);
        }

        @Override
        List<Object> eval(String script, String digest, byte[] key, byte[]... args) {
            if (script.equals(LeaseScripts.CLAIM) && ((Long) super.eval(IS_FREE, null, key).get(0)) == 1) {
                return super.eval(TAKE, null, key, args);
            }
            return super.eval(script, digest, key, args);
        }
    }

    /**
     * Every lease time is the application node's clock, passed to the scripts, instead of the
     * server's {@code TIME}; the keys expire after the retention, relative, so that they live.
     */
    static final class ClientClock extends RewritingNode {
        private final InstantSource clock;

        ClientClock(RedisNode server, InstantSource clock) {
            super(server);
            this.clock = clock;
        }

        @Override
        List<Object> eval(String script, String digest, byte[] key, byte[]... args) {
            String onClientTime = script.replace(SERVER_TIME, "local now = tonumber(ARGV[#ARGV])\n")
                    .replace("redis.call('PEXPIREAT', KEYS[1], now + retention)", "redis.call('PEXPIRE', KEYS[1], retention)")
                    .replace("redis.call('PEXPIREAT', KEYS[1], expires)", "redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]))");
            byte[][] withNow = Arrays.copyOf(args, args.length + 1);
            withNow[args.length] = Long.toString(clock.millis()).getBytes(StandardCharsets.US_ASCII);
            return super.eval(onClientTime, null, key, withNow);
        }
    }

    /** The completion is not fenced by the owner token: any attempt's result is recorded over a record in progress. */
    static final class CompletionWithoutToken extends RewritingNode {
        CompletionWithoutToken(RedisNode server) {
            super(server);
        }

        @Override
        List<Object> eval(String script, String digest, byte[] key, byte[]... args) {
            if (script.equals(LeaseScripts.COMPLETE)) {
                return super.eval(script.replace(" or r.o ~= ARGV[1]", ""), null, key, args);
            }
            return super.eval(script, digest, key, args);
        }
    }
}
