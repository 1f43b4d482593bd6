import Foundation
import IOCore
import Redis
import TestSupport
import Testing

/// What the client hands back for each kind of reply, against a real `redis-server`: the
/// `setup` commands run first, then `command`'s outcome is compared.
struct ReplyCase: Sendable, CustomTestStringConvertible {
    let name: String
    var setup: [[RedisArgument]] = []
    let command: [RedisArgument]
    let expected: Result<RedisValue, RedisError>
    var testDescription: String { name }

    static let all: [ReplyCase] = [
        ReplyCase(name: "SET is a status", command: ["SET", "k", "v"], expected: .success(.simpleString("OK"))),
        ReplyCase(
            name: "GET is a bulk string", setup: [["SET", "k", "v"]], command: ["GET", "k"],
            expected: .success(.bulk("v"))),
        ReplyCase(
            name: "INCR is an integer", setup: [["INCR", "n"]], command: ["INCR", "n"], expected: .success(.integer(2))),
        ReplyCase(name: "a missing key is null", command: ["GET", "missing"], expected: .success(.null)),
        ReplyCase(
            name: "LRANGE is an array", setup: [["RPUSH", "l", "a", "b", "c"]], command: ["LRANGE", "l", 0, -1],
            expected: .success(.array([.bulk("a"), .bulk("b"), .bulk("c")]))),
        ReplyCase(name: "an empty LRANGE", command: ["LRANGE", "none", 0, -1], expected: .success(.array([]))),
        ReplyCase(
            name: "XRANGE nests arrays",
            setup: [["XADD", "s", "1-1", "f", "v", "g", "w"], ["XADD", "s", "2-1", "h", "x"]],
            command: ["XRANGE", "s", "-", "+"],
            expected: .success(
                .array([
                    .array([.bulk("1-1"), .array([.bulk("f"), .bulk("v"), .bulk("g"), .bulk("w")])]),
                    .array([.bulk("2-1"), .array([.bulk("h"), .bulk("x")])])
                ]))),
        ReplyCase(
            name: "an error reply", setup: [["SET", "k", "v"]], command: ["INCR", "k"],
            expected: .failure(.server("ERR value is not an integer or out of range"))),
        ReplyCase(
            name: "a wrong type", setup: [["SET", "k", "v"]], command: ["LPUSH", "k", "x"],
            expected: .failure(.server("WRONGTYPE Operation against a key holding the wrong kind of value"))),
        ReplyCase(
            name: "an error inside EXEC stays a value",
            setup: [["SET", "k", "v"], ["MULTI"], ["SET", "j", "1"], ["INCR", "k"]],
            command: ["EXEC"],
            expected: .success(.array([.simpleString("OK"), .error("ERR value is not an integer or out of range")])))
    ]
}

@Test(arguments: ReplyCase.all)
func eachKindOfReplyComesBackAsItsValue(_ sample: ReplyCase) async throws {
    try await withRedis { _, client async throws in
        for command in sample.setup { _ = try await client.command(command) }
        #expect(await client.result(sample.command) == sample.expected)
    }
}

@Test func keysAndValuesAreBinarySafe() async throws {
    try await withRedis { _, client async throws in
        let key = RedisArgument(Array("k\r\n\0$*".utf8))
        let value = [0, 13, 10, 36, 42, 13, 10, 0] + (0...255).map(UInt8.init)
        #expect(try await client.command(["SET", key, RedisArgument(value)]) == .simpleString("OK"))
        #expect(try await client.command(["GET", key]) == .bulk(value))
        #expect(try await client.command(["STRLEN", key]) == .integer(value.count))
    }
}

@Test func aThousandPipelinedCommandsAreAnsweredInOrder() async throws {
    try await withRedis { _, client async throws in
        let replies = Recorder<Int>()
        // Sent in one go before the first connection is up: they wait for it, then go out
        // together and are matched to their replies first in first out.
        await client.loop.run {
            for _ in 0..<1000 {
                client.send(["INCR", "counter"]) { replies.append((try? $0.get().int) ?? -1) }
            }
        }
        #expect(await eventually(timeout: 20) { replies.count == 1000 })
        #expect(replies.all == Array(1...1000))
        let statistics = await client.loop.run { client.statistics }
        #expect(statistics.commands == 1000)
        #expect(statistics.failures == 0)
    }
}

@Test func aReplyLargerThanOneReadArrivesWhole() async throws {
    try await withRedis { _, client async throws in
        let value = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        #expect(try await client.command(["SET", "big", RedisArgument(value)]) == .simpleString("OK"))
        #expect(try await client.command(["GET", "big"]) == .bulk(value))
        #expect(try await client.command(["PING"]) == .simpleString("PONG"))
    }
}

@Test func scriptsRunBySHA1AndAreSentAgainAfterAFlush() async throws {
    try await withRedis { _, client async throws in
        let script = RedisScript(source: "return redis.call('INCRBY', KEYS[1], ARGV[1])")
        #expect(try await client.command(["SCRIPT", "LOAD", RedisArgument(script.source)]) == .bulk(script.sha1))
        #expect(try await client.eval(script, keys: ["c"], args: [5]) == .integer(5))
        #expect(try await client.command(["SCRIPT", "FLUSH"]) == .simpleString("OK"))
        // The server no longer knows it: NOSCRIPT, then EVAL once, which loads it again.
        #expect(try await client.eval(script, keys: ["c"], args: [2]) == .integer(7))
        #expect(try await client.command(["SCRIPT", "EXISTS", RedisArgument(script.sha1)]) == .array([.integer(1)]))
        #expect(try await client.eval(script, keys: ["c"], args: [1]) == .integer(8))
        let stats = try await client.command(["INFO", "commandstats"]).string ?? ""
        #expect(stats.contains("cmdstat_eval:calls=1,"))
        #expect(stats.contains("cmdstat_evalsha:calls=3,"))
    }
}

@Test func aScriptErrorIsAServerError() async throws {
    try await withRedis { _, client async throws in
        let script = RedisScript(source: "return redis.error_reply('NOPE not today')")
        await #expect(throws: RedisError.server("NOPE not today")) { try await client.eval(script) }
    }
}

@Test func authAndSelectComeFromTheEndpoint() async throws {
    try await withRedis(password: "pa55word", database: 3) { server, client async throws in
        #expect(try await client.command(["SET", "k", "v"]) == .simpleString("OK"))
        let info = try await client.command(["CLIENT", "INFO"]).string ?? ""
        #expect(info.contains(" db=3 "))
        // The key is in database 3, not 0.
        let (loop, other) = try makeClient(url: server.url)
        defer { loop.stop() }
        #expect(try await other.command(["GET", "k"]) == .null)
        #expect(try await other.command(["SELECT", 3]) == .simpleString("OK"))
        #expect(try await other.command(["GET", "k"]) == .bulk("v"))
        await loop.run { other.close() }
    }
}

@Test func aWrongPasswordFailsAndSaysWhy() async throws {
    let server = try await RedisServer(password: "right")
    defer { server.stop() }
    let (loop, client) = try makeClient(
        url: "redis://:wrong@127.0.0.1:\(server.port)", settings: RedisSettings(reconnectInitialDelay: 0.5))
    defer { loop.stop() }
    #expect(await client.result(["PING"]) == .failure(.connectionLost))
    let why = await loop.run { client.lastError }
    #expect(why?.serverMessage?.hasPrefix("WRONGPASS") == true)
    #expect(await loop.run { client.isConnected } == false)
    await loop.run { client.close() }
    #expect(await client.result(["PING"]) == .failure(.closed))
}

@Test func aBlockingReadOnASecondClientWakesOnXADD() async throws {
    try await withRedis(settings: RedisSettings(commandTimeout: 1)) { server, writer async throws in
        let (loop, reader) = try makeClient(url: server.url, settings: RedisSettings(commandTimeout: 1))
        defer { loop.stop() }
        let read = Task {
            await reader.result(["XREAD", "BLOCK", 30_000, "STREAMS", "events", "$"], timeout: 30)
        }
        // XADD once the read is blocked on the server, or `$` would be past the entry.
        #expect(
            await eventually(timeout: 10, pollInterval: 0.02) {
                (try? await writer.command(["INFO", "clients"]).string?.contains("blocked_clients:1")) == true
            })
        let id = try await writer.command(["XADD", "events", "*", "call", "c1"])
        let reply = try await read.value.get()
        #expect(
            reply == .array([.array([.bulk("events"), .array([.array([id, .array([.bulk("call"), .bulk("c1")])])])])]))
        await loop.run { reader.close() }
    }
}

@Test func aBlockingCommandsDeadlineIsItsBlockTimePlusTheCommandTimeout() async throws {
    try await withRedis(settings: RedisSettings(commandTimeout: 0.3)) { _, client async throws in
        // BLPOP blocks 1.5 s on an empty list, then answers null: within its own deadline...
        #expect(await client.result(["BLPOP", "empty", 1.5], timeout: 1.5) == .success(.null))
        // ... and past the plain deadline when its block time is not given.
        #expect(await client.result(["BLPOP", "empty", 1.5]) == .failure(.timeout))
    }
}

@Test func commandsAfterCloseFailWithClosed() async throws {
    try await withRedis { _, client async throws in
        #expect(try await client.command(["PING"]) == .simpleString("PONG"))
        client.close()
        #expect(await client.result(["PING"]) == .failure(.closed))
    }
}
