import Synchronization
import TestSupport
import Testing

@testable import SIP

/// The configured T1 and T2 reach a live agent's transactions: a request to a peer that
/// never answers is retransmitted at T1 doubling up to T2 and times out at 64*T1, run by
/// loop timers. (With osip's built-in T1 of 500 ms the timeout came after 32 s whatever the
/// configuration said.)
@Suite struct TransactionTimerTests {
    /// Counts the datagrams a silent peer got, and what the transaction reported.
    private final class Outcome: Sendable {
        let events = Mutex<[String]>([])
        func record(_ event: ClientTransactionEvent) {
            let name =
                switch event {
                case .response(let r): "response \(r.statusCode ?? 0)"
                case .timeout: "timeout"
                case .transportError: "transportError"
                }
            events.withLock { $0.append(name) }
        }
    }

    @Test(arguments: ["OPTIONS", "INVITE"])
    func anUnansweredRequestIsRetransmittedAndTimesOutOnTheConfiguredTimers(method: String) async throws {
        var configuration = SIPUserAgentConfiguration(
            listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))], t1: 0.05)
        configuration.t2 = 0.4
        let ua = try SIPUserAgent(configuration: configuration)
        _ = try ua.start()
        defer { ua.shutdown() }
        let silent = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let peer = SIPPeer(transport: .udp, address: silent.local)
        let outcome = Outcome()
        await ua.loop.run {
            let uri = SIPURI(user: "silent", host: "127.0.0.1", port: silent.local.port)
            ua.sendRequest(method, to: uri, peer: peer, from: NameAddress(uri: SIPURI(user: "gw", host: "127.0.0.1"))) {
                outcome.record($0)
            }
        }
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        var from = RawSocketAddress()
        let timedOut = await eventually(timeout: 20) {
            while buffer.withUnsafeMutableBytes({ silent.receive(into: $0, from: &from) }) != nil { received += 1 }
            return outcome.events.withLock { $0 } == ["timeout"]
        }
        // The timeout is due at 64*T1 = 3.2 s (osip's fixed T1 made it 32 s, past the wait).
        #expect(timedOut, "\(outcome.events.withLock { $0 })")
        // Sent at 0, 0.05, 0.15, 0.35, 0.75 ... (E capped at T2 = 0.4 for OPTIONS, A doubling
        // for INVITE): 7 or more copies by 3.2 s, osip's T1 would have sent 4.
        #expect(received >= 5, "\(received) copies")
    }
}
