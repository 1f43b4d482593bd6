import Foundation
import IOCore
import Testing

@testable import SIP

/// `PendingInviteSnapshot`: a ringing INVITE kept as JSON by one process and CANCELled by
/// another (RFC 3261 §9.1): the CANCEL has the INVITE's Request-URI, Call-ID, From, To, CSeq
/// number and Route, and the sender adds the INVITE's own top Via.
@Suite struct PendingInviteSnapshotTests {
    static let invite = """
        INVITE sip:+15551230001@10.0.0.9:5060 SIP/2.0\r
        Via: SIP/2.0/UDP 10.0.0.5:5060;branch=z9hG4bKabc123;rport\r
        Max-Forwards: 70\r
        Route: <sip:10.0.0.3:5060;lr>\r
        From: <sip:+15557654321@gw.example>;tag=f1\r
        To: <sip:+15551230001@10.0.0.9>\r
        Call-ID: c1@10.0.0.5\r
        CSeq: 7 INVITE\r
        Contact: <sip:irisgw@10.0.0.5:5060>\r
        Content-Type: application/sdp\r
        Content-Length: 4\r
        \r
        v=0\n
        """

    @Test func theCancelMatchesTheStoredInvite() throws {
        let sent = try SIPMessage.parse(Array(Self.invite.utf8))
        let peer = SIPPeer(transport: .udp, address: SocketAddress(host: "10.0.0.3", port: 5060))
        let stored = try JSONEncoder().encode(PendingInviteSnapshot(sent, peer: peer))
        let snapshot = try JSONDecoder().decode(PendingInviteSnapshot.self, from: stored)
        #expect(snapshot.peer == peer)
        let invite = try SIPMessage.parse(Array(snapshot.invite.utf8))
        #expect(invite.body.isEmpty && invite[.contentType] == nil, "kept without its body")
        let cancel = try #require(invite.cancelRequest)
        #expect(cancel.method == "CANCEL")
        #expect(cancel.requestURI == sent.requestURI)
        #expect(cancel[.callID] == "c1@10.0.0.5" && cancel[.from] == sent[.from] && cancel[.to] == sent[.to])
        #expect(cancel[.cseq] == "7 CANCEL")
        #expect(cancel.values(.route) == ["<sip:10.0.0.3:5060;lr>"])
        #expect(invite.values(.via).first == "SIP/2.0/UDP 10.0.0.5:5060;branch=z9hG4bKabc123;rport")
    }

    @Test func aResponseHasNoCancel() throws {
        let response = try SIPMessage.parse(
            Array(
                ("SIP/2.0 180 Ringing\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\n"
                    + "To: <sip:b@h>;tag=2\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n\r\n").utf8))
        #expect(response.cancelRequest == nil)
    }
}
