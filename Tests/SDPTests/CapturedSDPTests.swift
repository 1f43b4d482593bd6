import Foundation
import SDP
import Testing

@Suite("Captured SDP: carriers, browsers, softphones")
struct CapturedSDPTests {
    @Test("parses to the expected streams and round-trips", arguments: capturedBodies)
    func parseAndRoundTrip(sample: CapturedSDP) throws {
        let sdp = try SessionDescription.parse(sample.body)
        #expect(sdp.media.map(\.media) == sample.media)
        let first = try #require(sdp.media.first)
        #expect(first.port == sample.port)
        #expect(first.rtpMaps.map(\.encodingName) == sample.codecs)
        #expect(sdp.connection(ofMedia: 0)?.host == sample.host)
        #expect(sdp.direction(ofMedia: 0) == sample.direction)
        #expect(first.telephoneEventPayloadType == sample.telephoneEvent)
        let written = sdp.serialize()
        if sample.exactRoundTrip { #expect(written == sample.body) }
        #expect(try SessionDescription.parse(written) == sdp)
    }

    @Test("Chrome: ICE, DTLS and BUNDLE parameters of each stream; candidates read")
    func chrome() throws {
        let sdp = try SessionDescription.parse(chromeOffer)
        for index in 0..<3 {
            let webrtc = try WebRTCMediaParameters(sdp, media: index)
            #expect(webrtc.iceUfrag == "Xq7P" && webrtc.icePwd == "5pZ1kAfJ3oB8vY2wN6mR0tLc")
            #expect(webrtc.fingerprints.map(\.value) == [chromeFingerprint])
            #expect(webrtc.setup == .actpass)
            #expect(webrtc.mid == String(index))
            #expect(!webrtc.iceLite)
        }
        #expect(sdp.media.map(\.isDTLSSRTP) == [true, true, false])
        #expect(sdp.media.map(\.rtcpMux) == [true, true, false])
        #expect(sdp.media[2].rtpMaps.isEmpty && !sdp.media[2].isRTP)
        #expect(sdp.media[0].fmtp(for: 111) == "minptime=10;useinbandfec=1")
        #expect(
            sdp.media[0].rtpMap(for: 111)
                == RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48_000, channels: 2))
        #expect(sdp.attributes.first(named: "group")?.value == "BUNDLE 0 1 2")

        let candidates = sdp.media[0].candidates
        #expect(candidates.count == 3)
        #expect(
            candidates[0].address.hasSuffix(".local") && candidates[0].type == "host" && candidates[0].port == 54400)
        #expect(candidates[0].extensions.map(\.name) == ["generation", "network-id", "network-cost"])
        #expect(
            candidates[1].type == "srflx" && candidates[1].relatedAddress == "0.0.0.0" && candidates[1].relatedPort == 0
        )
        #expect(
            candidates[2].transport == "tcp"
                && candidates[2].extensions.first == .init(name: "tcptype", value: "active"))
        #expect(sdp.media[1].candidates.isEmpty)
    }

    @Test("Firefox: session-level fingerprint inherited, channel counts on G722 and DTMF")
    func firefox() throws {
        let sdp = try SessionDescription.parse(firefoxOffer)
        let webrtc = try WebRTCMediaParameters(sdp, media: 0)
        #expect(webrtc.fingerprints.count == 1 && webrtc.fingerprints[0].bytes.count == 32)
        #expect(webrtc.iceUfrag == "3e9a1c7b" && webrtc.icePwd.count == 32)
        #expect(sdp.origin.username == "mozilla...THIS_IS_SDPARTA-99.0")
        let g722 = try #require(sdp.media[0].rtpMap(for: 9))
        #expect(g722.channels == 1 && g722.isSameCodec(as: .g722))
        #expect(sdp.media[0].fmtp(for: 101) == "0-15")
        #expect(sdp.connection(ofMedia: 0)?.isNullAddress == true)
    }

    @Test("baresip: SDES keys in preference order, RTP/SAVP, session bandwidth and tool")
    func baresip() throws {
        let sdp = try SessionDescription.parse(baresipOffer)
        let audio = sdp.media[0]
        #expect(audio.isSecureRTP && !audio.isPlainRTP && !audio.isDTLSSRTP)
        #expect(audio.cryptos.map(\.tag) == [1, 2])
        #expect(audio.cryptos.map(\.suite) == ["AES_CM_128_HMAC_SHA1_80", "AES_CM_128_HMAC_SHA1_32"])
        #expect(audio.cryptos.allSatisfy { $0.keys.count == 1 && $0.keys[0].keySalt.count == 30 })
        #expect(audio.bandwidths == [SDPBandwidth(type: "AS", bandwidth: 128)])
        #expect(audio.ptime == 20)
        #expect(sdp.attributes.first(named: "tool")?.value == "baresip 3.10.1")
        #expect(throws: WebRTCMediaParameters.Problem.self) { try WebRTCMediaParameters(sdp, media: 0) }
    }

    @Test("pjsua: RTCP port, session b= before t=, 8 kHz DTMF preferred over 16 kHz")
    func pjsua() throws {
        let sdp = try SessionDescription.parse(pjsuaOffer)
        #expect(sdp.bandwidths == [SDPBandwidth(type: "AS", bandwidth: 84)])
        #expect(sdp.media[0].bandwidths == [SDPBandwidth(type: "TIAS", bandwidth: 64_000)])
        #expect(sdp.media[0].rtcpPort == 4001)
        #expect(sdp.media[0].rtpMap(for: 120)?.clockRate == 16_000)
        #expect(sdp.attributes == [SDPAttribute(name: "X-nat", value: "0")])
    }

    @Test("carriers: origin and media addresses differ, fmtp and maxptime read, T.38 has no RTP")
    func carriers() throws {
        let sonus = try SessionDescription.parse(sonusOffer)
        #expect(sonus.origin.address == "198.51.100.40" && sonus.connection == .ip4("198.51.100.41"))
        #expect(sonus.media[0].fmtp(for: 18) == "annexb=no" && sonus.media[0].maxptime == 20)
        let fax = try SessionDescription.parse(t38ReInvite)
        #expect(!fax.media[0].isRTP && fax.media[0].formats == ["t38"] && fax.media[0].proto == "udptl")
        #expect(fax.media[0].attributes.first(named: "T38MaxBitRate")?.value == "14400")
        let hold = try SessionDescription.parse(freeswitchHoldIPv6)
        #expect(hold.isHold && hold.media[0].rtcpPort == 24609)
        #expect(hold.serialize() == freeswitchHoldIPv6.replacingOccurrences(of: "\n", with: "\r\n"))
    }

    @Test(
        "broken bodies met in the field fail with the line and reason",
        arguments: [
            (
                "SIP headers leaked into the body", "Content-Type: application/sdp\r\n\r\n" + cloudCarrierOffer, 1,
                "no '='"
            ),
            ("an HTML error page", "<html><body>502 Bad Gateway</body></html>\r\n", 1, "no '='"),
            ("a JSEP JSON wrapper", "{\"type\":\"offer\",\"sdp\":\"v=0\\r\\n\"}", 1, "single letter"),
            (
                "cut mid-line", chromeOffer.components(separatedBy: "m=audio")[0] + "m=audio 54400 UDP/TLS\r\n", 8,
                "m= needs"
            ),
            ("two bodies concatenated by a B2BUA", sonusOffer + sonusOffer, 14, "session-level"),
            (
                "c= with only the address", crlf(["v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=192.0.2.1", "t=0 0"]), 4,
                "c= needs 3"
            ),
            ("o= without the address", crlf(["v=0", "o=- 1 1 IN IP4", "s=-", "t=0 0"]), 2, "o= needs 6"),
            (
                "CR alone as line end", cloudCarrierOffer.replacingOccurrences(of: "\r\n", with: "\r"), 1,
                "CR inside a line"
            ),
            (
                "rtpmap in place of the m= port",
                crlf(["v=0", "o=- 1 1 IN IP4 h", "s=-", "t=0 0", "m=audio PCMU/8000 RTP/AVP 0"]), 5, "not a number"
            )
        ] as [(String, String, Int, String)])
    func broken(name: String, body: String, line: Int, fragment: String) {
        #expect {
            _ = try SessionDescription.parse(body)
        } throws: { error in
            guard let error = error as? SDPError else { return false }
            return error.line == line && error.reason.contains(fragment) && error.kind == .malformed
                && error.description.hasPrefix(line > 0 ? "SDP line \(line): " : "SDP: ")
        }
    }
}

@Suite("a=candidate (RFC 8839 §5.1)")
struct SDPCandidateTests {
    @Test(
        "browser and softphone candidates parse and serialize back",
        arguments: [
            "2999745851 1 udp 2122260223 4b2c9a0e-1d6f-4e3a-8f2b-7c5d1e9a0b3c.local 54400 typ host generation 0 network-id 1 network-cost 10",
            "842163049 1 udp 1686052607 203.0.113.77 54400 typ srflx raddr 0.0.0.0 rport 0 generation 0 network-id 1 network-cost 10",
            "3610185283 1 tcp 1518280447 192.0.2.7 9 typ host tcptype active generation 0",
            "1 1 UDP 41885439 198.51.100.9 61000 typ relay raddr 203.0.113.77 rport 54400",
            "0 1 UDP 2122252543 2001:db8::7 53907 typ host",
            "1 1 udp 2130706431 192.0.2.10 40000 typ host",
            "a+/Z 2 udp 1 192.0.2.10 40001 typ prflx"
        ])
    func roundTrip(value: String) throws {
        let candidate = try SDPCandidate.parse(value)
        #expect(candidate.serialize() == value)
        #expect(candidate.attribute == SDPAttribute(name: "candidate", value: value))
        #expect(try SDPCandidate.parse(candidate.serialize()) == candidate)
    }

    @Test("fields of a relayed candidate")
    func fields() throws {
        let candidate = try SDPCandidate.parse(
            "1 1 UDP 41885439 198.51.100.9 61000 typ relay raddr 203.0.113.77 rport 54400 ufrag Kx4e")
        #expect(
            candidate
                == SDPCandidate(
                    foundation: "1", component: 1, transport: "UDP", priority: 41_885_439,
                    address: "198.51.100.9", port: 61000, type: "relay", relatedAddress: "203.0.113.77",
                    relatedPort: 54400, extensions: [.init(name: "ufrag", value: "Kx4e")]))
    }

    @Test(
        "malformed candidates name the field",
        arguments: [
            ("1 1 udp 2130706431 192.0.2.10 40000", "found 6 fields"),
            ("1 0 udp 2130706431 192.0.2.10 40000 typ host", "component"),
            ("1 1234 udp 2130706431 192.0.2.10 40000 typ host", "component"),
            ("1 1 udp 4294967296 192.0.2.10 40000 typ host", "priority"),
            ("1 1 udp -5 192.0.2.10 40000 typ host", "priority"),
            ("1 1 udp 1 192.0.2.10 70000 typ host", "port"),
            ("1 1 udp 1 192.0.2.10 40000 type host", "'typ'"),
            ("1 1 udp 1 192.0.2.10 40000 typ host generation", "no value"),
            ("1 1 udp 1 192.0.2.10 40000 typ srflx raddr 0.0.0.0 rport x", "rport"),
            ("f-1 1 udp 1 192.0.2.10 40000 typ host", "foundation"),
            (String(repeating: "a", count: 33) + " 1 udp 1 192.0.2.10 40000 typ host", "foundation")
        ] as [(String, String)])
    func malformed(value: String, fragment: String) {
        #expect {
            _ = try SDPCandidate.parse(value, line: 12)
        } throws: { error in
            guard let error = error as? SDPError else { return false }
            return error.line == 12 && error.reason.contains(fragment)
        }
    }

    @Test("WebRTC attribute builders write the RFC spellings")
    func builders() throws {
        let fingerprint = try #require(SDPFingerprint(chromeFingerprint))
        let attributes: [SDPAttribute] = [
            .mid("0"), .iceUfrag("Xq7P"), .icePwd("5pZ1kAfJ3oB8vY2wN6mR0tLc"),
            .fingerprint(fingerprint), .setup(.passive), .rtcpMux, .endOfCandidates, .iceLite
        ]
        #expect(
            attributes.map { $0.serialize() } == [
                "mid:0", "ice-ufrag:Xq7P", "ice-pwd:5pZ1kAfJ3oB8vY2wN6mR0tLc", "fingerprint:" + chromeFingerprint,
                "setup:passive", "rtcp-mux", "end-of-candidates", "ice-lite"
            ])
        #expect(SDPConnection(addrType: "IP4", address: "233.252.0.1/127/3").host == "233.252.0.1")
        let sdp = try SessionDescription.parse(chromeOffer)
        #expect(sdp.firstMedia("video") == 1 && sdp.firstMedia("audio") == 0 && sdp.firstMedia("image") == nil)
    }
}
