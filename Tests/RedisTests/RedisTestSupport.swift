import Foundation
import IOCore
import Redis
import Synchronization
import TestSupport

/// Runs `body` with a fresh `redis-server` and a client on a loop of its own (made before
/// the loop starts, as `RedisClient` asks); closes the client, stops the loop and the
/// server afterwards, whatever `body` did.
func withRedis<T>(
    settings: RedisSettings = RedisSettings(), password: String? = nil, database: Int = 0,
    _ body: (RedisServer, RedisClient) async throws -> T
) async throws -> T {
    let server = try await RedisServer(password: password)
    defer { server.stop() }
    let (loop, client) = try makeClient(url: server.url + "/\(database)", settings: settings)
    defer { loop.stop() }
    do {
        let result = try await body(server, client)
        await loop.run { client.close() }
        return result
    } catch {
        await loop.run { client.close() }
        throw error
    }
}

/// A client for `url` on a new, started loop; the caller stops the loop (after `close()`).
func makeClient(url: String, settings: RedisSettings = RedisSettings()) throws -> (EventLoop, RedisClient) {
    let loop = try EventLoop()
    let client = RedisClient(endpoint: try RedisEndpoint.parse(url), loop: loop, settings: settings)
    loop.start(name: "redis-test")
    return (loop, client)
}

/// What callbacks on a loop saw, read by the test on its own task.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

extension RedisValue {
    static func bulk(_ text: String) -> RedisValue { .bulk(Array(text.utf8)) }
}

extension RedisClient {
    /// The command's outcome as a `Result`, for expectations on failures.
    func result(_ command: [RedisArgument], timeout: Double? = nil) async -> Result<RedisValue, RedisError> {
        do { return .success(try await self.command(command, timeout: timeout)) } catch { return .failure(error) }
    }
}
