import Glibc
import Synchronization
import TestSupport
import Testing

@testable import SIP

/// An out-of-dialog OPTIONS over a real UDP socket: 200 with the agent's capabilities while it
/// takes calls, 503 with Retry-After while its owner says it is out of service (a draining
/// gateway), so a load balancer's probe takes the node out of rotation.
@Suite struct OutOfServiceOptionsTests {
    static func options(_ n: Int, port: Int) -> [UInt8] {
        OverloadSheddingTests.request("OPTIONS", n, port: port)
    }

    /// The next answer's parsed message, or nil within 5 s.
    static func answer(_ probe: UDPSocket) async -> SIPMessage? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = RawSocketAddress()
        var answer: SIPMessage?
        _ = await eventually(timeout: 5, pollInterval: 0.002) {
            guard let n = buffer.withUnsafeMutableBytes({ probe.receive(into: $0, from: &from) }) else { return false }
            answer = try? SIPMessage.parse(Array(buffer[0..<n]))
            return true
        }
        return answer
    }

    @Test func optionsIs503WithRetryAfterWhileOutOfServiceAnd200Otherwise() async throws {
        var c = SIPUserAgentConfiguration(listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))])
        c.defence = .testPeer
        let ua = try SIPUserAgent(configuration: c)
        let draining = Mutex(false)
        ua.outOfServiceRetryAfter = { draining.withLock { $0 } ? 30 : nil }
        let bound = try ua.start()
        defer { ua.shutdown() }
        let probe = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 1 << 20)
        let to = try #require(RawSocketAddress(bound[0].address))
        func ask(_ n: Int) async -> SIPMessage? {
            _ = Self.options(n, port: probe.local.port).withUnsafeBytes { probe.send($0, to: to) }
            return await Self.answer(probe)
        }

        let up = try #require(await ask(1))
        #expect(up.statusCode == 200 && up[.retryAfter] == nil)
        #expect(up[.allow]?.contains("OPTIONS") == true)
        #expect(!up.supported.contains("replaces"), "Replaces is not handled: \(up.supported)")

        draining.withLock { $0 = true }
        let down = try #require(await ask(2))
        #expect(down.statusCode == 503 && down[.retryAfter] == "30")
        #expect(down.to?.tag != nil)

        draining.withLock { $0 = false }
        #expect(await ask(3)?.statusCode == 200)
    }

    @Test func replacesIsAdvertisedOnlyWhenHandled() throws {
        var c = SIPUserAgentConfiguration()
        #expect(try !SIPUserAgent(configuration: c).supportedOptionTags.contains("replaces"))
        #expect(!c.callPolicy.supportedOptionTags.contains("replaces"))
        c.handlesReplaces = true
        #expect(try SIPUserAgent(configuration: c).supportedOptionTags == ["replaces", "100rel", "timer"])
    }
}
