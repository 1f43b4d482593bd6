// SDP bodies as the peers the gateway meets write them: carrier SBCs, browsers, softphones.
// Addresses are documentation ones (RFC 5737, RFC 3849), keys and ICE passwords are not
// live; the line order, attribute spellings and quirks are the peers' own.

import SDP

/// Joins lines with CRLF, ending the last one too.
func crlf(_ lines: [String]) -> String {
    lines.map { $0 + "\r\n" }.joined()
}

/// One captured body and what reading it must give.
struct CapturedSDP: Sendable, CustomStringConvertible {
    var source: String
    var body: String
    /// The `m=` media types in order.
    var media: [String]
    /// The first stream's port and its codec names in `m=` order.
    var port: UInt16
    var codecs: [String]
    /// The first stream's connection address (its own c=, else the session's).
    var host: String?
    var direction: MediaDirection
    var telephoneEvent: Int?
    /// Whether serialize() gives back the same bytes (the peer already writes RFC 8866 order).
    var exactRoundTrip: Bool = true
    var description: String { source }
}

let chromeFingerprint =
    "sha-256 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB:3C:88:F2:2A:E3:2C:F0:C1:22:D6:0A:C1"

/// Chrome 120 `createOffer` after ICE gathering: audio, video and a data channel bundled,
/// mDNS and server-reflexive candidates, Opus with RED.
let chromeOffer = crlf([
    "v=0",
    "o=- 3420563437436373914 2 IN IP4 127.0.0.1",
    "s=-",
    "t=0 0",
    "a=group:BUNDLE 0 1 2",
    "a=extmap-allow-mixed",
    "a=msid-semantic: WMS 5f0a8c1e-7f3b-4a5e-9b1d-2c6e8f1a3b4c",
    "m=audio 54400 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126",
    "c=IN IP4 203.0.113.77",
    "a=rtcp:9 IN IP4 0.0.0.0",
    "a=candidate:2999745851 1 udp 2122260223 4b2c9a0e-1d6f-4e3a-8f2b-7c5d1e9a0b3c.local 54400 typ host generation 0 network-id 1 network-cost 10",
    "a=candidate:842163049 1 udp 1686052607 203.0.113.77 54400 typ srflx raddr 0.0.0.0 rport 0 generation 0 network-id 1 network-cost 10",
    "a=candidate:3610185283 1 tcp 1518280447 4b2c9a0e-1d6f-4e3a-8f2b-7c5d1e9a0b3c.local 9 typ host tcptype active generation 0 network-id 1 network-cost 10",
    "a=ice-ufrag:Xq7P",
    "a=ice-pwd:5pZ1kAfJ3oB8vY2wN6mR0tLc",
    "a=ice-options:trickle",
    "a=fingerprint:" + chromeFingerprint,
    "a=setup:actpass",
    "a=mid:0",
    "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
    "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
    "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
    "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
    "a=sendrecv",
    "a=msid:5f0a8c1e-7f3b-4a5e-9b1d-2c6e8f1a3b4c 8d2e4f6a-0b1c-4d3e-9f8a-7b6c5d4e3f2a",
    "a=rtcp-mux",
    "a=rtpmap:111 opus/48000/2",
    "a=rtcp-fb:111 transport-cc",
    "a=fmtp:111 minptime=10;useinbandfec=1",
    "a=rtpmap:63 red/48000/2",
    "a=fmtp:63 111/111",
    "a=rtpmap:9 G722/8000",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:13 CN/8000",
    "a=rtpmap:110 telephone-event/48000",
    "a=rtpmap:126 telephone-event/8000",
    "a=ssrc:1001211223 cname:Yx5lRg8dJ2c4QnHb",
    "a=ssrc:1001211223 msid:5f0a8c1e-7f3b-4a5e-9b1d-2c6e8f1a3b4c 8d2e4f6a-0b1c-4d3e-9f8a-7b6c5d4e3f2a",
    "m=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103",
    "c=IN IP4 0.0.0.0",
    "a=rtcp:9 IN IP4 0.0.0.0",
    "a=ice-ufrag:Xq7P",
    "a=ice-pwd:5pZ1kAfJ3oB8vY2wN6mR0tLc",
    "a=ice-options:trickle",
    "a=fingerprint:" + chromeFingerprint,
    "a=setup:actpass",
    "a=mid:1",
    "a=sendrecv",
    "a=rtcp-mux",
    "a=rtcp-rsize",
    "a=rtpmap:96 VP8/90000",
    "a=rtcp-fb:96 goog-remb",
    "a=rtcp-fb:96 transport-cc",
    "a=rtcp-fb:96 ccm fir",
    "a=rtcp-fb:96 nack",
    "a=rtcp-fb:96 nack pli",
    "a=rtpmap:97 rtx/90000",
    "a=fmtp:97 apt=96",
    "a=rtpmap:102 H264/90000",
    "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
    "a=rtpmap:103 rtx/90000",
    "a=fmtp:103 apt=102",
    "m=application 9 UDP/DTLS/SCTP webrtc-datachannel",
    "c=IN IP4 0.0.0.0",
    "a=ice-ufrag:Xq7P",
    "a=ice-pwd:5pZ1kAfJ3oB8vY2wN6mR0tLc",
    "a=ice-options:trickle",
    "a=fingerprint:" + chromeFingerprint,
    "a=setup:actpass",
    "a=mid:2",
    "a=sctp-port:5000",
    "a=max-message-size:262144"
])

/// Firefox 121: the fingerprint and ICE options at session level, telephone-event with a
/// channel count, nothing gathered yet (port 9, c=0.0.0.0).
let firefoxOffer = crlf([
    "v=0",
    "o=mozilla...THIS_IS_SDPARTA-99.0 7952127423464036290 0 IN IP4 0.0.0.0",
    "s=-",
    "t=0 0",
    "a=fingerprint:sha-256 21:7B:0F:0C:96:2C:3E:51:F1:C3:8A:16:0F:1D:3F:07:9C:AD:53:9B:69:2D:1F:0A:1D:BF:7A:DD:1B:3E:6E:10",
    "a=group:BUNDLE 0",
    "a=ice-options:trickle",
    "a=msid-semantic:WMS *",
    "m=audio 9 UDP/TLS/RTP/SAVPF 109 9 0 8 101",
    "c=IN IP4 0.0.0.0",
    "a=sendrecv",
    "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
    "a=extmap:2/recvonly urn:ietf:params:rtp-hdrext:csrc-audio-level",
    "a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid",
    "a=fmtp:109 maxplaybackrate=48000;stereo=1;useinbandfec=1",
    "a=fmtp:101 0-15",
    "a=ice-pwd:7d4e2f1a9c8b6e5d3f2a1b0c9d8e7f6a",
    "a=ice-ufrag:3e9a1c7b",
    "a=mid:0",
    "a=msid:{8f7e6d5c-4b3a-2918-0706-f5e4d3c2b1a0} {0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9}",
    "a=rtcp-mux",
    "a=rtpmap:109 opus/48000/2",
    "a=rtpmap:9 G722/8000/1",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000/1",
    "a=setup:actpass",
    "a=ssrc:2655508255 cname:{5bd3c8a4-1f0e-4d2b-9a7c-6e5f4d3c2b1a}"
])

/// baresip 3.10 with mediaenc=srtp-mand: RTP/SAVP keyed by two `a=crypto` lines, `a=tool`.
let baresipOffer = crlf([
    "v=0",
    "o=- 1445813513 2123443585 IN IP4 192.0.2.20",
    "s=-",
    "c=IN IP4 192.0.2.20",
    "t=0 0",
    "a=tool:baresip 3.10.1",
    "m=audio 10030 RTP/SAVP 96 9 0 8 101",
    "b=AS:128",
    "a=rtpmap:96 opus/48000/2",
    "a=fmtp:96 stereo=1;sprop-stereo=1",
    "a=rtpmap:9 G722/8000",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=fmtp:101 0-15",
    "a=sendrecv",
    "a=label:1",
    "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR",
    "a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:wmz2jMVJJNg1ZCY3Mny2ZcbN0xeDnsDRlvIQN6uZ",
    "a=ssrc:3462213574 cname:sip:alice@example.com",
    "a=ptime:20"
])

/// pjsua 2.14: session-level b=AS before t=, `a=X-nat`, wideband and narrowband
/// telephone-event, RTCP on the next port.
let pjsuaOffer = crlf([
    "v=0",
    "o=- 3909386145 3909386145 IN IP4 192.0.2.30",
    "s=pjmedia",
    "b=AS:84",
    "t=0 0",
    "a=X-nat:0",
    "m=audio 4000 RTP/AVP 96 97 98 9 0 8 3 120 121",
    "c=IN IP4 192.0.2.30",
    "b=TIAS:64000",
    "a=rtcp:4001 IN IP4 192.0.2.30",
    "a=sendrecv",
    "a=rtpmap:96 opus/48000/2",
    "a=fmtp:96 useinbandfec=1",
    "a=rtpmap:97 speex/16000",
    "a=rtpmap:98 speex/8000",
    "a=rtpmap:9 G722/8000",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:3 GSM/8000",
    "a=rtpmap:120 telephone-event/16000",
    "a=fmtp:120 0-16",
    "a=rtpmap:121 telephone-event/8000",
    "a=fmtp:121 0-16",
    "a=ssrc:1270367462 cname:0b6e5d1f2a3c4b5d"
])

/// A cloud carrier's INVITE offer (an Asterisk-based media gateway): G.711, DTMF 0-16.
let cloudCarrierOffer = crlf([
    "v=0",
    "o=root 1452783209 1452783209 IN IP4 203.0.113.60",
    "s=Twilio Media Gateway",
    "c=IN IP4 203.0.113.60",
    "t=0 0",
    "m=audio 16338 RTP/AVP 0 8 101",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=fmtp:101 0-16",
    "a=ptime:20",
    "a=maxptime:150",
    "a=sendrecv"
])

/// A Ribbon (Sonus) SBC: origin and media on different addresses, G.729 without annex B,
/// a=maxptime after the direction.
let sonusOffer = crlf([
    "v=0",
    "o=Sonus_UAC 204942 95710 IN IP4 198.51.100.40",
    "s=SIP Media Capabilities",
    "c=IN IP4 198.51.100.41",
    "t=0 0",
    "m=audio 22862 RTP/AVP 0 18 101",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:18 G729/8000",
    "a=fmtp:18 annexb=no",
    "a=rtpmap:101 telephone-event/8000",
    "a=fmtp:101 0-15",
    "a=sendrecv",
    "a=maxptime:20"
])

/// A BroadWorks re-INVITE switching to T.38 fax: no RTP, only udptl attributes.
let t38ReInvite = crlf([
    "v=0",
    "o=BroadWorks 728485 2 IN IP4 203.0.113.70",
    "s=-",
    "c=IN IP4 203.0.113.70",
    "t=0 0",
    "m=image 32000 udptl t38",
    "a=T38FaxVersion:0",
    "a=T38MaxBitRate:14400",
    "a=T38FaxRateManagement:transferredTCF",
    "a=T38FaxMaxBuffer:262",
    "a=T38FaxMaxDatagram:176",
    "a=T38FaxUdpEC:t38UDPRedundancy"
])

/// A FreeSWITCH hold re-INVITE over IPv6: sendonly, RTCP attribute with an address, the
/// session name and direction lines FreeSWITCH writes (LF line ends, as some B2BUAs relay).
let freeswitchHoldIPv6 = [
    "v=0",
    "o=FreeSWITCH 1700000000 1700000002 IN IP6 2001:db8::15",
    "s=FreeSWITCH",
    "c=IN IP6 2001:db8::15",
    "t=0 0",
    "m=audio 24608 RTP/AVP 8 101",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=fmtp:101 0-16",
    "a=ptime:20",
    "a=sendonly",
    "a=rtcp:24609 IN IP6 2001:db8::15"
].map { $0 + "\n" }.joined()

/// What each captured body must read as.
let capturedBodies: [CapturedSDP] = [
    CapturedSDP(
        source: "Chrome 120 offer", body: chromeOffer, media: ["audio", "video", "application"], port: 54400,
        codecs: ["opus", "red", "G722", "PCMU", "PCMA", "CN", "telephone-event", "telephone-event"],
        host: "203.0.113.77", direction: .sendrecv, telephoneEvent: 126),
    CapturedSDP(
        source: "Firefox 121 offer", body: firefoxOffer, media: ["audio"], port: 9,
        codecs: ["opus", "G722", "PCMU", "PCMA", "telephone-event"], host: "0.0.0.0", direction: .sendrecv,
        telephoneEvent: 101),
    CapturedSDP(
        source: "baresip SDES offer", body: baresipOffer, media: ["audio"], port: 10030,
        codecs: ["opus", "G722", "PCMU", "PCMA", "telephone-event"], host: "192.0.2.20", direction: .sendrecv,
        telephoneEvent: 101),
    CapturedSDP(
        source: "pjsua offer", body: pjsuaOffer, media: ["audio"], port: 4000,
        codecs: ["opus", "speex", "speex", "G722", "PCMU", "PCMA", "GSM", "telephone-event", "telephone-event"],
        host: "192.0.2.30", direction: .sendrecv, telephoneEvent: 121),
    CapturedSDP(
        source: "cloud carrier offer", body: cloudCarrierOffer, media: ["audio"], port: 16338,
        codecs: ["PCMU", "PCMA", "telephone-event"], host: "203.0.113.60", direction: .sendrecv, telephoneEvent: 101),
    CapturedSDP(
        source: "Sonus SBC offer", body: sonusOffer, media: ["audio"], port: 22862,
        codecs: ["PCMU", "G729", "telephone-event"], host: "198.51.100.41", direction: .sendrecv, telephoneEvent: 101),
    CapturedSDP(
        source: "BroadWorks T.38 re-INVITE", body: t38ReInvite, media: ["image"], port: 32000, codecs: [],
        host: "203.0.113.70", direction: .sendrecv, telephoneEvent: nil),
    CapturedSDP(
        source: "FreeSWITCH IPv6 hold, LF ends", body: freeswitchHoldIPv6, media: ["audio"], port: 24608,
        codecs: ["PCMA", "telephone-event"], host: "2001:db8::15", direction: .sendonly, telephoneEvent: 101,
        exactRoundTrip: false)
]
