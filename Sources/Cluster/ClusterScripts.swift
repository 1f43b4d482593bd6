/// The cluster's Lua scripts. Each runs atomically in Redis, which is what makes a claim,
/// a limit or a lock hold for the whole cluster; times come from Redis's own clock (`TIME`),
/// so the nodes' clocks need not agree.
enum ClusterScripts {
    /// Redis's clock in Unix ms.
    private static let now = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        """

    /// Joins: claims this id's other incarnations for takeover, publishes the record.
    /// KEYS: nodes, takeovers. ARGV: member, id, ttl ms, record JSON, prefix, takeover ttl ms.
    /// Returns the claimed members.
    static let join =
        now + """

            local claimed = {}
            local head = ARGV[2] .. '#'
            for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
              if m ~= ARGV[1] and string.sub(m, 1, #head) == head then
                redis.call('ZREM', KEYS[1], m)
                redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), m)
                redis.call('SET', ARGV[5] .. ':reaped:' .. m, '1', 'PX', 600000)
                table.insert(claimed, m)
              end
            end
            redis.call('DEL', ARGV[5] .. ':reaped:' .. ARGV[1])
            redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
            redis.call('SET', ARGV[5] .. ':node:' .. ARGV[1], ARGV[4], 'PX', ARGV[3])
            return claimed
            """

    /// Renews a member; 0 when it had been counted dead (it must not come back as itself).
    /// KEYS: nodes, takeovers. ARGV: member, ttl ms, record JSON, prefix.
    static let heartbeat =
        now + """

            local marker = ARGV[4] .. ':reaped:' .. ARGV[1]
            if redis.call('EXISTS', marker) == 1 then
              redis.call('DEL', marker)
              return 0
            end
            if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
            redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
            redis.call('SET', ARGV[4] .. ':node:' .. ARGV[1], ARGV[3], 'PX', ARGV[2])
            return 1
            """

    /// Claims members whose TTL ran out, and takeovers whose claim ran out (their claimant
    /// died too). KEYS: nodes, takeovers. ARGV: takeover ttl ms, prefix. Returns the members.
    static let reap =
        now + """

            local claimed = {}
            for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
              redis.call('ZREM', KEYS[1], m)
              redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), m)
              redis.call('SET', ARGV[2] .. ':reaped:' .. m, '1', 'PX', 600000)
              table.insert(claimed, m)
            end
            for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
              redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), m)
              table.insert(claimed, m)
            end
            return claimed
            """

    /// Frees what a taken-over (or cleanly leaving) member held: its call leases, its
    /// directory entries, its dialogs, its record. KEYS: nodes, takeovers, sessions.
    /// ARGV: member, prefix.
    static let release = """
        local p, m = ARGV[2], ARGV[1]
        for _, lease in ipairs(redis.call('SMEMBERS', p .. ':leases:' .. m)) do
          local cut = string.find(lease, '\\n', 1, true)
          if cut then redis.call('HDEL', string.sub(lease, 1, cut - 1), string.sub(lease, cut + 1)) end
        end
        for _, room in ipairs(redis.call('HKEYS', p .. ':held:' .. m)) do
          if redis.call('HGET', KEYS[3], room) == m then redis.call('HDEL', KEYS[3], room) end
        end
        redis.call('DEL', p .. ':leases:' .. m, p .. ':held:' .. m, p .. ':dialogs:' .. m, p .. ':node:' .. m)
        redis.call('ZREM', KEYS[1], m)
        redis.call('ZREM', KEYS[2], m)
        return 1
        """

    /// Counts a call against a trunk direction's cluster limits, or says which limit refuses:
    /// 1 counted (or already counted), -1 at `maxConcurrentCalls`, -2 at `callsPerSecond`.
    /// KEYS: trunk calls hash, trunk rate key (no second), member's leases.
    /// ARGV: call key, member, max concurrent, calls per second.
    static let acquire = """
        local t = redis.call('TIME')
        if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
        if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
        local rate = KEYS[2] .. ':' .. t[1]
        if tonumber(redis.call('GET', rate) or '0') >= tonumber(ARGV[4]) then return -2 end
        redis.call('INCR', rate)
        redis.call('PEXPIRE', rate, 2000)
        redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
        redis.call('SADD', KEYS[3], KEYS[1] .. '\\n' .. ARGV[1])
        return 1
        """

    /// Frees one call's count. KEYS: trunk calls hash, member's leases. ARGV: call key.
    static let releaseCall = """
        redis.call('HDEL', KEYS[1], ARGV[1])
        redis.call('SREM', KEYS[2], KEYS[1] .. '\\n' .. ARGV[1])
        return 1
        """

    /// Takes or renews a lock held by one member at a time: 1 held by the caller, 0 by another.
    /// KEYS: lock. ARGV: member, ttl ms.
    static let lock = """
        local holder = redis.call('GET', KEYS[1])
        if not holder then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          return 1
        end
        if holder == ARGV[1] then
          redis.call('PEXPIRE', KEYS[1], ARGV[2])
          return 1
        end
        return 0
        """

    /// Lets go of a lock only if the caller holds it. KEYS: lock. ARGV: member.
    static let unlock = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
        return 0
        """
}
