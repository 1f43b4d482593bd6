import Foundation
import IOCore
import Redis
import TestSupport
import Testing

/// The client against a server that goes away, comes back, or stops answering.
@Suite struct RedisRecoveryTests {
    @Test func aStoppedServerMakesCommandsUnavailableAndARestartReconnects() async throws {
        try await withRedis { server, client async throws in
            let states = Recorder<RedisClient.State>()
            await client.loop.run { client.onStateChange = { states.append($0) } }
            #expect(try await client.command(["SET", "k", "v"]) == .simpleString("OK"))
            #expect(states.all == [.connected])

            await server.stopped()
            #expect(
                await eventually(timeout: 10) { await client.result(["PING"]) == .failure(.unavailable) })
            #expect(states.all == [.connected, .disconnected])

            try await server.restart()
            #expect(await eventually(timeout: 10) { states.count == 3 })
            #expect(states.all == [.connected, .disconnected, .connected])
            // A new server without persistence: the key is gone, commands work again.
            #expect(try await client.command(["GET", "k"]) == .null)
            #expect(try await client.command(["SET", "k", "w"]) == .simpleString("OK"))
            let statistics = await client.loop.run { client.statistics }
            #expect(statistics.reconnects == 1)
            #expect(statistics.failures >= 1)
        }
    }

    @Test func aFrozenServerTimesACommandOutAndTheClientRecoversWhenItThaws() async throws {
        let settings = RedisSettings(commandTimeout: 0.3, reconnectMaxDelay: 0.5)
        try await withRedis(settings: settings) { server, client async throws in
            let states = Recorder<RedisClient.State>()
            await client.loop.run { client.onStateChange = { states.append($0) } }
            #expect(try await client.command(["SET", "k", "v"]) == .simpleString("OK"))

            server.pause()
            defer { server.resume() }
            #expect(await client.result(["GET", "k"]) == .failure(.timeout))
            #expect(await client.loop.run { client.statistics.timeouts } == 1)
            #expect(states.all == [.connected, .disconnected])

            server.resume()
            #expect(await eventually(timeout: 15) { await client.result(["GET", "k"]) == .success(.bulk("v")) })
            #expect(states.all.last == .connected)
        }
    }

    @Test func aServerThatIsNotThereAtStartIsReachedOnceItIs() async throws {
        let port = try freePort()
        let (loop, client) = try makeClient(url: "redis://127.0.0.1:\(port)")
        defer { loop.stop() }
        client.start()
        #expect(await eventually(timeout: 5) { await client.result(["PING"]) == .failure(.unavailable) })
        // Nothing listens yet: a server on that port is picked up by the back-off.
        let server = try await RedisServer(port: port)
        defer { server.stop() }
        #expect(await eventually(timeout: 10) { await client.result(["PING"]) == .success(.simpleString("PONG")) })
        await loop.run { client.close() }
    }
}
