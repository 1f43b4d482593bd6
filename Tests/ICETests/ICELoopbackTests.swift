import Glibc
import IOCore
import TestSupport
import Testing

@testable import ICE

@Suite("ICE-lite over a real UDP socket on 127.0.0.1")
struct ICELoopbackTests {
    /// Waits up to 2 s for one datagram on a non-blocking socket.
    static func receive(_ socket: UDPSocket) async -> ([UInt8], SocketAddress)? {
        var buffer = [UInt8](repeating: 0, count: 1500)
        var from = RawSocketAddress()
        var got: ([UInt8], SocketAddress)?
        _ = await eventually(timeout: 2, pollInterval: 0.005) {
            let n = buffer.withUnsafeMutableBytes { socket.receive(into: $0, from: &from) }
            if let n, let address = from.address { got = (Array(buffer.prefix(n)), address) }
            return got != nil
        }
        return got
    }

    @Test("a browser's check round-trips through the agent")
    func roundTrip() async throws {
        let gateway = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let browser = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        var agent = ICELiteAgent(local: Browser.gateway, remote: Browser.browser, now: 0)

        let tid = STUNTransactionID.random()
        let check = Browser.check(useCandidate: true, transactionID: tid)
        let to = try #require(RawSocketAddress(gateway.local))
        #expect(check.withUnsafeBytes { browser.send($0, to: to) })

        let (datagram, source) = try #require(await Self.receive(gateway))
        #expect(source == browser.local)
        #expect(PacketKind(datagram: datagram) == .stun)
        let reaction = agent.receive(datagram, from: source, now: 0.1)
        #expect(reaction.outcome == .answered)
        #expect(reaction.nominated == browser.local)
        let response = try #require(reaction.response)
        let back = try #require(RawSocketAddress(reaction.destination))
        #expect(response.withUnsafeBytes { gateway.send($0, to: back) })

        let (answer, from) = try #require(await Self.receive(browser))
        #expect(from == gateway.local)
        let message = try STUNMessage.parse(answer)
        #expect(message.type == .bindingSuccessResponse)
        #expect(message.transactionID == tid)
        #expect(message.xorMappedAddress == browser.local)
        #expect(STUNMessage.verifyMessageIntegrity(answer, key: Array(Browser.gateway.pwd.utf8)) == .valid)
        #expect(STUNMessage.verifyFingerprint(answer) == .valid)
    }
}
