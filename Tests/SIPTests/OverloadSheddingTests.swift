import Dispatch
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import SIP

/// A loop that falls behind its UDP socket sheds requests that start work, unparsed, and keeps
/// those that finish it: real sockets, the loop held while a burst queues up.
@Suite struct OverloadSheddingTests {
    static func request(_ method: String, _ n: Int, port: Int) -> [UInt8] {
        Array(
            """
            \(method) sip:irisgw@127.0.0.1 SIP/2.0\r
            Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bK-shed-\(method)-\(n)\r
            From: <sip:probe@127.0.0.1>;tag=p\(n)\r
            To: <sip:irisgw@127.0.0.1>\(method == "BYE" ? ";tag=gone" : "")\r
            Call-ID: shed-\(method)-\(n)@127.0.0.1\r
            CSeq: 1 \(method)\r
            Max-Forwards: 70\r
            Content-Length: 0\r
            \r

            """.utf8)
    }

    @Test func aBackloggedSocketShedsNewRequestsAndKeepsTheOnesThatFinishWork() async throws {
        var c = SIPUserAgentConfiguration(listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))])
        c.defence = .testPeer
        let ua = try SIPUserAgent(configuration: c)
        let bound = try ua.start()
        defer { ua.shutdown() }
        let probe = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 8 << 20)
        let to = try #require(RawSocketAddress(bound[0].address))
        // Hold the loop while 300 OPTIONS and then 5 BYEs queue up in its socket.
        let gate = DispatchSemaphore(value: 0)
        ua.loop.execute { gate.wait() }
        for i in 0..<300 {
            _ = Self.request("OPTIONS", i, port: probe.local.port).withUnsafeBytes { probe.send($0, to: to) }
        }
        for i in 0..<5 { _ = Self.request("BYE", i, port: probe.local.port).withUnsafeBytes { probe.send($0, to: to) } }
        gate.signal()

        // Every answer: 200 to the OPTIONS that were handled, 481 to each BYE.
        var statuses: [Int] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = RawSocketAddress()
        let deadline = SIPEventLoop.now() + 10
        while statuses.filter({ $0 == 481 }).count < 5, SIPEventLoop.now() < deadline {
            guard let n = buffer.withUnsafeMutableBytes({ probe.receive(into: $0, from: &from) }) else {
                try await Task.sleep(nanoseconds: 2_000_000)  // a poll: suspends, holds no thread
                continue
            }
            let line = String(decoding: buffer[0..<n].prefix(12), as: UTF8.self)
            if let code = Int(line.dropFirst(8).prefix(3)) { statuses.append(code) }
        }
        let shed = await ua.loop.run { ua.refusals[.overloaded] ?? 0 }
        #expect(statuses.filter { $0 == 481 }.count == 5, "every BYE is handled: \(statuses.count) answers")
        #expect(shed > 0 && shed < 300, "OPTIONS shed while behind: \(shed)")
        #expect(statuses.filter { $0 == 200 }.count == 300 - shed)
    }
    /// A batch read from the socket hands its datagrams on in the order they came: a peer's
    /// request sent before a response (a NOTIFY before its REFER's 202) stays first.
    @Test func aBatchHandsItsDatagramsOnInArrivalOrder() async throws {
        var c = SIPUserAgentConfiguration(listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))])
        c.defence = .testPeer
        let ua = try SIPUserAgent(configuration: c)
        let read = Mutex<[String]>([])
        ua.wireTap = { m in
            guard m.direction == .received else { return }
            read.withLock { $0.append(String(decoding: m.bytes.prefix(7), as: UTF8.self)) }
        }
        let bound = try ua.start()
        defer { ua.shutdown() }
        let probe = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 1 << 20)
        let to = try #require(RawSocketAddress(bound[0].address))
        let response = Array(
            """
            SIP/2.0 200 OK\r
            Via: SIP/2.0/UDP 127.0.0.1:\(bound[0].address.port);branch=z9hG4bK-nobody\r
            From: <sip:irisgw@127.0.0.1>;tag=a\r
            To: <sip:probe@127.0.0.1>;tag=b\r
            Call-ID: batch-order@127.0.0.1\r
            CSeq: 1 OPTIONS\r
            Content-Length: 0\r
            \r

            """.utf8)
        // Hold the loop while 3 requests and then a response queue up: one read takes all 4.
        let gate = DispatchSemaphore(value: 0)
        ua.loop.execute { gate.wait() }
        for i in 0..<3 {
            _ = Self.request("OPTIONS", i, port: probe.local.port).withUnsafeBytes { probe.send($0, to: to) }
        }
        _ = response.withUnsafeBytes { probe.send($0, to: to) }
        gate.signal()
        #expect(await eventually(timeout: 10) { read.withLock { $0.count } == 4 })
        #expect(read.withLock { $0 } == ["OPTIONS", "OPTIONS", "OPTIONS", "SIP/2.0"])
    }
}
