import Glibc
import Synchronization
import TestSupport
import Testing

@testable import SIP

/// A BYE in a dialog another process left up (`sendBye(in:)`: crash recovery, a cluster's
/// takeover), over real UDP: the peer's 200, sent where the BYE's Via says (RFC 3261
/// §18.2.2), ends the BYE's transaction, so the peer gets the BYE once, and the completion
/// gets 200. (SIPp answers in-dialog requests at the address the call's INVITE came from, so
/// against SIPp a takeover's BYE is retransmitted until Timer F: SIPp's, not ours.)
@Suite struct StoredDialogByeTests {
    @Test func theTwoHundredEndsTheByeTransaction() async throws {
        var c = SIPUserAgentConfiguration(listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))])
        let ua = try SIPUserAgent(configuration: c)
        try ua.start()
        defer { ua.shutdown() }
        let carrier = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 1 << 20)
        let dialog = Dialog(
            callID: "c1@10.0.0.5", localTag: "f1", remoteTag: "t1",
            localAddress: try NameAddress.parse("<sip:+15557654321@gw.test>"),
            remoteAddress: try NameAddress.parse("<sip:+15551230001@127.0.0.1>"), localSequence: 2,
            remoteSequence: nil, remoteTarget: try SIPURI.parse("sip:carrier@127.0.0.1:\(carrier.local.port)"),
            routeSet: [], localContact: try SIPURI.parse("sip:irisgw@127.0.0.1"))
        let snapshot = DialogSnapshot(dialog, peer: SIPPeer(transport: .udp, address: carrier.local))
        let status = Mutex<Int??>(nil)
        await ua.loop.run {
            _ = ua.sendBye(in: snapshot, headers: []) { code in status.withLock { $0 = code } }
        }
        let bye = try #require(await OutOfServiceOptionsTests.answer(carrier))
        #expect(bye.method == "BYE")
        let ok = SIPMessage.response(to: bye, status: 200)
        let via = try Via.parse(try #require(bye.values(.via).first))
        let back = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: via.port ?? 5060)))
        _ = ok.serialize().withUnsafeBytes { carrier.send($0, to: back) }
        #expect(await eventually(timeout: 5) { status.withLock { $0 } == .some(200) }, "the completion got the 200")
        // Timer E would retransmit after 0.5 s: nothing comes in three times that.
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = RawSocketAddress()
        let again = await eventually(timeout: 1.5, pollInterval: 0.01) {
            buffer.withUnsafeMutableBytes { carrier.receive(into: $0, from: &from) } != nil
        }
        #expect(!again, "no retransmission after the 200")
    }
}
