import IOCore
import Media
import SDP
import SIP
import Testing

@testable import Gateway

/// The answer to a browser's offer: ICE-lite, our fingerprint, passive, rtcp-mux, the
/// offer's mid and BUNDLE, one host candidate, other streams refused in order.
struct WebRTCAnswerTests {
    static let offer = """
        v=0\r
        o=- 4611731400430051336 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111 0 126\r
        c=IN IP4 0.0.0.0\r
        a=ice-ufrag:Kx4e\r
        a=ice-pwd:2FqJc6R7Zp1qQ9qkHq3Vd1bP\r
        a=fingerprint:sha-256 7B:8B:F0:65:5F:78:E2:51:3B:AC:6F:F3:3F:46:1B:35:DC:B8:5F:64:1A:24:C2:43:F0:A1:58:D0:A1:2C:19:08\r
        a=setup:actpass\r
        a=mid:0\r
        a=sendrecv\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=rtpmap:0 PCMU/8000\r
        a=rtpmap:126 telephone-event/8000\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=mid:1\r
        a=rtpmap:96 VP8/90000\r

        """

    @Test func answersTheAudioAndRefusesTheRest() throws {
        let sdp = try SessionDescription.parse(Self.offer)
        let remote = try WebRTCMediaParameters(sdp, media: 0)
        let ours = try #require(SDPFingerprint("sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":")))
        let webrtc = WebRTCLegParameters(
            offer: sdp, index: 0, remote: remote, localUfrag: "gw01", localPwd: "abcdefghijklmnopqrstuvwx",
            fingerprint: ours)
        let leg = NegotiatedLeg(
            codec: .opus(.init()), rtpMap: try #require(sdp.media[0].rtpMap(for: 111)),
            telephoneEvent: sdp.media[0].rtpMap(for: 126), remote: nil, direction: .sendrecv)
        let answer = WebRTCAnswer.make(
            offer: sdp, index: 0, leg: leg, webrtc: webrtc,
            address: SocketAddress(host: "192.0.2.10", port: 40000),
            session: SDPSessionIdentity(id: "7", version: 1), direction: .sendrecv)
        let text = answer.serialize()
        let reparsed = try SessionDescription.parse(text)
        #expect(reparsed.media.count == 2)
        #expect(
            reparsed.media[0].proto == "UDP/TLS/RTP/SAVPF" && reparsed.media[0].port == 40000
                && reparsed.media[0].formats == ["111", "126"])
        #expect(reparsed.media[1].port == 0 && reparsed.media[1].media == "video")
        for line in [
            "a=ice-lite", "a=group:BUNDLE 0\r\n", "a=mid:0", "a=mid:1", "a=ice-ufrag:gw01",
            "a=ice-pwd:abcdefghijklmnopqrstuvwx",
            "a=fingerprint:sha-256 AB:AB:", "a=setup:passive", "a=rtcp-mux",
            "a=candidate:1 1 udp 2130706431 192.0.2.10 40000 typ host", "a=end-of-candidates",
            "a=rtpmap:111 opus/48000/2", "a=fmtp:111 minptime=10;useinbandfec=1", "c=IN IP4 192.0.2.10"
        ] {
            #expect(text.contains(line), "\(line) missing from\n\(text)")
        }
        // What the browser will check, read back through our own parser.
        let back = try WebRTCMediaParameters(reparsed, media: 0)
        #expect(back.setup == .passive && back.iceLite && back.fingerprints == [ours])
    }
}
