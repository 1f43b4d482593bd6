import Testing

@testable import SDP

/// The WebRTC parts of an SDP offer as Chromium writes one (audio only, ICE gathering done).
struct WebRTCDescriptionTests {
    static let chromiumOffer = """
        v=0\r
        o=- 4611731400430051336 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0\r
        a=extmap-allow-mixed\r
        a=msid-semantic: WMS stream\r
        m=audio 54321 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126\r
        c=IN IP4 127.0.0.1\r
        a=rtcp:9 IN IP4 0.0.0.0\r
        a=candidate:1 1 udp 2113937151 127.0.0.1 54321 typ host generation 0 network-cost 999\r
        a=ice-ufrag:Kx4e\r
        a=ice-pwd:2FqJc6R7Zp1qQ9qkHq3Vd1bP\r
        a=ice-options:trickle\r
        a=fingerprint:sha-256 7B:8B:F0:65:5F:78:E2:51:3B:AC:6F:F3:3F:46:1B:35:DC:B8:5F:64:1A:24:C2:43:F0:A1:58:D0:A1:2C:19:08\r
        a=setup:actpass\r
        a=mid:0\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r
        a=sendrecv\r
        a=msid:stream track\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=rtcp-fb:111 transport-cc\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=rtpmap:63 red/48000/2\r
        a=fmtp:63 111/111\r
        a=rtpmap:9 G722/8000\r
        a=rtpmap:0 PCMU/8000\r
        a=rtpmap:8 PCMA/8000\r
        a=rtpmap:13 CN/8000\r
        a=rtpmap:110 telephone-event/48000\r
        a=rtpmap:126 telephone-event/8000\r
        a=ssrc:1234 cname:abc\r

        """

    @Test func readsChromiumsOffer() throws {
        let sdp = try SessionDescription.parse(Self.chromiumOffer)
        #expect(sdp.media[0].isDTLSSRTP)
        #expect(!sdp.media[0].isPlainRTP)
        let p = try WebRTCMediaParameters(sdp, media: 0)
        #expect(p.iceUfrag == "Kx4e" && p.icePwd == "2FqJc6R7Zp1qQ9qkHq3Vd1bP")
        #expect(p.setup == .actpass && p.mid == "0" && p.rtcpMux && !p.iceLite)
        #expect(
            p.fingerprints.count == 1 && p.fingerprints[0].hashFunction == "sha-256"
                && p.fingerprints[0].bytes.count == 32)
        #expect(
            p.fingerprints[0].value
                == "sha-256 7B:8B:F0:65:5F:78:E2:51:3B:AC:6F:F3:3F:46:1B:35:DC:B8:5F:64:1A:24:C2:43:F0:A1:58:D0:A1:2C:19:08"
        )
    }

    @Test(arguments: [
        ("a=ice-ufrag:Kx4e\r\n", "a=ice-ufrag"),
        ("a=ice-pwd:2FqJc6R7Zp1qQ9qkHq3Vd1bP\r\n", "a=ice-pwd"),
        (
            "a=fingerprint:sha-256 7B:8B:F0:65:5F:78:E2:51:3B:AC:6F:F3:3F:46:1B:35:DC:B8:5F:64:1A:24:C2:43:F0:A1:58:D0:A1:2C:19:08\r\n",
            "a=fingerprint"
        )
    ])
    func refusesAnOfferWithout(_ line: String, _ says: String) throws {
        let sdp = try SessionDescription.parse(Self.chromiumOffer.replacingOccurrences(of: line, with: ""))
        let problem = #expect(throws: WebRTCMediaParameters.Problem.self) { try WebRTCMediaParameters(sdp, media: 0) }
        #expect(problem?.description.contains(says) == true)
    }

    @Test func sessionLevelCredentialsAndFingerprintCount() throws {
        var text = Self.chromiumOffer.replacingOccurrences(of: "a=ice-ufrag:Kx4e\r\n", with: "")
        text = text.replacingOccurrences(
            of: "a=group:BUNDLE 0\r\n", with: "a=group:BUNDLE 0\r\na=ice-ufrag:Sess\r\na=ice-lite\r\n")
        let p = try WebRTCMediaParameters(try SessionDescription.parse(text), media: 0)
        #expect(p.iceUfrag == "Sess" && p.iceLite)
    }

    @Test(arguments: ["sha-256", "sha-256 ", "sha-256 7B:8", "sha-256 7B::8B", "sha-256 ZZ:00", " 7B:8B"])
    func refusesMalformedFingerprints(_ value: String) {
        #expect(SDPFingerprint(value) == nil)
    }
}
