import IOCore
import Media
import SDP
import Testing

@testable import Gateway

// Opus on the trunk (RFC 7587): the fmtp read and written, the peer's fmtp honoured by our
// encoder, our offer and answer, the platform leg's codec chosen for passthrough, and the
// profile's `media.opusTrunk`. The argument tables live at file scope (as static members the
// compiler reports a circular reference).

/// An fmtp value and what it reads as.
private let fmtpRows: [(String?, OpusFormatParameters)] = [
    (nil, .init()),
    ("", .init()),
    ("minptime=10;useinbandfec=1", .init(useInbandFEC: true)),
    (
        "maxplaybackrate=16000; sprop-maxcapturerate=8000;stereo=1;sprop-stereo=0;cbr=1;useinbandfec=0;usedtx=1",
        .init(
            maxPlaybackRate: 16_000, maxCaptureRate: 8000, stereo: true, spropStereo: false, cbr: true,
            useInbandFEC: false, useDTX: true)
    ),
    ("MaxPlaybackRate=8000;MAXAVERAGEBITRATE=20000", .init(maxPlaybackRate: 8000, maxAverageBitrate: 20_000)),
    // Out of range, not a number, not 0/1: read as absent (RFC 7587 §6.1 defaults).
    ("maxplaybackrate=4000;maxaveragebitrate=1000000;stereo=yes;usedtx=2", .init()),
    ("maxplaybackrate=abc;useinbandfec", .init()),
    // Unknown parameters are skipped.
    ("ptime=20;x-foo=1;usedtx=0", .init(useDTX: false))
]

@Test(arguments: fmtpRows)
func opusFmtpIsRead(text: String?, expected: OpusFormatParameters) {
    #expect(OpusFormatParameters(fmtp: text) == expected)
}

@Test func opusFmtpIsWrittenInRFCOrderAndReadsBack() {
    let f = TrunkProfile.MediaSettings.defaultOpusTrunk
    #expect(
        f.fmtp == "maxplaybackrate=16000;sprop-maxcapturerate=16000;stereo=0;sprop-stereo=0;useinbandfec=1;usedtx=0")
    #expect(OpusFormatParameters(fmtp: f.fmtp) == f)
    #expect(OpusFormatParameters().fmtp == "")
}

/// The peer's fmtp, our settings before it, and the encoder toward the peer.
private let encodingRows: [(String, AudioCodec.OpusSettings, AudioCodec.OpusSettings)] = [
    // Nothing said: no FEC, no DTX (the RFC's defaults), the rest ours.
    ("", .init(complexity: 3), .init(complexity: 3, inbandFEC: false, dtx: false)),
    ("useinbandfec=1", .init(inbandFEC: false), .init(inbandFEC: true)),
    ("useinbandfec=1;usedtx=1", .init(), .init(inbandFEC: true, dtx: true)),
    // maxplaybackrate caps the band coded, never widens ours.
    ("maxplaybackrate=8000", .init(), .init(inbandFEC: false, maxBandwidth: .narrowband)),
    ("maxplaybackrate=16000", .init(), .init(inbandFEC: false, maxBandwidth: .wideband)),
    (
        "maxplaybackrate=48000", .init(maxBandwidth: .narrowband),
        .init(inbandFEC: false, maxBandwidth: .narrowband)
    ),
    // maxaveragebitrate caps a fixed rate, and takes the place of the automatic one.
    ("maxaveragebitrate=20000", .init(bitrate: 32_000), .init(bitrate: 20_000, inbandFEC: false)),
    ("maxaveragebitrate=20000", .init(bitrate: 12_000), .init(bitrate: 12_000, inbandFEC: false)),
    ("maxaveragebitrate=20000", .init(), .init(bitrate: 20_000, inbandFEC: false)),
    // stereo=1 changes nothing: we send mono.
    ("stereo=1;useinbandfec=1", .init(), .init())
]

@Test(arguments: encodingRows)
func thePeersFmtpIsHonouredWhenWeEncode(
    fmtp: String, base: AudioCodec.OpusSettings, expected: AudioCodec.OpusSettings
) {
    #expect(OpusFormatParameters(fmtp: fmtp).encoding(base) == expected)
}

@Test func theEncoderGetsWhatThePeerAsked() throws {
    let s = OpusFormatParameters(fmtp: "maxplaybackrate=8000;useinbandfec=1;usedtx=1").encoding(.init())
    let codec = try LegCodec(.opus(s), sampleRate: 16_000)
    let inEffect = try #require(codec.opusSettingsInEffect)
    #expect(inEffect.inbandFEC && inEffect.dtx && inEffect.maxBandwidth == .narrowband)
    let plain = try #require(
        try LegCodec(.opus(OpusFormatParameters(fmtp: "").encoding(.init())), sampleRate: 16_000)
            .opusSettingsInEffect)
    #expect(!plain.inbandFEC && !plain.dtx && plain.maxBandwidth == .wideband)
}

// MARK: Offer and answer

private func sdp(_ media: String) throws -> SessionDescription {
    try SessionDescription.parse(
        "v=0\r\no=c 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" + media + "\r\n")
}

private let trunkCodecs = TrunkCodecs(
    names: ["opus", "PCMU"], opus: .init(complexity: 4), opusFormat: TrunkProfile.MediaSettings.defaultOpusTrunk)

@Test func ourOfferNamesOpusWithOurFmtp() throws {
    let offer = MediaNegotiation.trunkOffer(
        address: SocketAddress(host: "127.0.0.1", port: 4000), codecs: trunkCodecs, telephoneEvent: true,
        session: SDPSessionIdentity())
    let m = offer.media[0]
    #expect(m.formats == ["111", "0", "101", "110"])
    #expect(m.rtpMap(for: 111) == RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48_000, channels: 2))
    #expect(m.fmtp(for: 111) == TrunkProfile.MediaSettings.defaultOpusTrunk.fmtp)
    #expect(m.fmtp(for: 101) == "0-16")
    // telephone-event at Opus's clock beside the 8000 Hz one, for whichever codec the carrier takes.
    #expect(m.rtpMap(for: 110) == .telephoneEvent(payloadType: 110, clockRate: 48_000))
    #expect(m.fmtp(for: 110) == "0-16")
    // A profile without Opus writes no Opus fmtp.
    let g711 = MediaNegotiation.trunkOffer(
        address: SocketAddress(host: "127.0.0.1", port: 4000), codecs: TrunkCodecs(names: ["PCMU"]),
        telephoneEvent: false, session: SDPSessionIdentity())
    #expect(g711.media[0].formats == ["0"] && g711.media[0].fmtp(for: 111) == nil)
}

@Test func theCarriersOpusIsTakenOnItsPayloadTypeAndEncodedAsItsFmtpSays() throws {
    let offer = try sdp(
        "m=audio 5000 RTP/AVP 98 0 101\r\na=rtpmap:98 opus/48000/2\r\n"
            + "a=fmtp:98 maxplaybackrate=8000;useinbandfec=1;usedtx=1\r\na=rtpmap:101 telephone-event/48000")
    let leg = try MediaNegotiation.trunkLeg(offer, codecs: trunkCodecs)
    #expect(leg.rtpMap.payloadType == 98 && leg.telephoneEvent?.payloadType == 101)
    #expect(
        leg.codec == .opus(.init(complexity: 4, inbandFEC: true, dtx: true, maxBandwidth: .narrowband)))
    // Our answer: the carrier's payload type, our fmtp (what we want to receive).
    let answer = MediaNegotiation.answer(
        for: leg, address: SocketAddress(host: "127.0.0.1", port: 4000), session: SDPSessionIdentity())
    #expect(answer.media[0].formats == ["98", "101"])
    #expect(answer.media[0].fmtp(for: 98) == TrunkProfile.MediaSettings.defaultOpusTrunk.fmtp)
}

/// telephone-event goes with its audio's clock: a carrier offering both takes the 48000 one with
/// Opus and the 8000 one with G.711 (our DTMF sender counts in the audio codec's clock).
@Test(arguments: [(["opus", "PCMU"], 110), (["PCMU"], 101)])
func telephoneEventFollowsTheCodecsClock(_ names: [String], _ expected: Int) throws {
    let offer = try sdp(
        "m=audio 5000 RTP/AVP 111 0 101 110\r\na=rtpmap:111 opus/48000/2\r\na=rtpmap:101 telephone-event/8000\r\n"
            + "a=rtpmap:110 telephone-event/48000")
    let codecs = TrunkCodecs(names: names, opus: .init(), opusFormat: TrunkProfile.MediaSettings.defaultOpusTrunk)
    let leg = try MediaNegotiation.trunkLeg(offer, codecs: codecs)
    #expect(leg.telephoneEvent?.payloadType == expected)
}

/// The carrier's m= line and rtpmaps, the profile's codecs, and the codec taken (nil: 488).
private let trunkChoiceRows: [(String, [String], String?)] = [
    ("m=audio 5000 RTP/AVP 0 111\r\na=rtpmap:111 opus/48000/2", ["opus", "PCMU"], "PCMU"),
    ("m=audio 5000 RTP/AVP 111 0\r\na=rtpmap:111 OPUS/48000/2", ["PCMU", "opus"], "opus"),
    ("m=audio 5000 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2", ["PCMU", "PCMA"], nil),
    // Opus is only ever at 48 kHz (RFC 7587 §7).
    ("m=audio 5000 RTP/AVP 111 8\r\na=rtpmap:111 opus/16000", ["opus", "PCMA"], "PCMA"),
    ("m=audio 5000 RTP/AVP 111\r\na=rtpmap:111 opus/8000", ["opus"], nil),
    ("m=audio 5000 RTP/AVP 9 0", ["opus", "G722"], "G722")
]

@Test(arguments: trunkChoiceRows)
func theTrunkTakesTheCarriersFirstCodecAmongTheProfiles(media: String, names: [String], expected: String?) throws {
    let leg = try? MediaNegotiation.trunkLeg(try sdp(media), codecs: TrunkCodecs(names: names))
    #expect(leg?.codec.description == expected)
}

// MARK: The platform leg's codec

private let appOffer = """
    v=0\r
    o=app 1 1 IN IP4 127.0.0.1\r
    s=-\r
    c=IN IP4 127.0.0.1\r
    t=0 0\r
    m=audio 6000 RTP/AVP 0 8 9 111 101\r
    a=rtpmap:111 opus/48000/2\r
    a=rtpmap:101 telephone-event/8000\r

    """

/// What the trunk will most likely use, and the app leg's codec: the same one, so the call
/// can pass through; Opus when there is no such codec or no preference.
private let platformRows: [(String?, String, String)] = [
    ("PCMU", appOffer, "PCMU"),
    ("PCMA", appOffer, "PCMA"),
    ("G722", appOffer, "G722"),
    ("opus", appOffer, "opus"),
    (nil, appOffer, "opus"),
    ("PCMA", appOffer.replacingOccurrences(of: " 0 8 9 111 101", with: " 0 111 101"), "opus"),
    ("opus", appOffer.replacingOccurrences(of: " 0 8 9 111 101", with: " 8 0 101"), "PCMU")
]

@Test(arguments: platformRows)
func thePlatformLegTakesTheTrunksLikelyCodec(prefer: String?, offer: String, expected: String) throws {
    let leg = try MediaNegotiation.platformLeg(offer: offer, prefer: prefer, opus: .init())
    #expect(leg.codec.description == expected)
}

@Test func anOfferWithNeitherOpusNorPCMUNorThePreferredCodecIsRefused() {
    let pcma = appOffer.replacingOccurrences(of: " 0 8 9 111 101", with: " 8 101")
    #expect(throws: NegotiationError.self) {
        try MediaNegotiation.platformLeg(offer: pcma, prefer: "G722", opus: .init())
    }
    #expect((try? MediaNegotiation.platformLeg(offer: pcma, prefer: "PCMA", opus: .init()))?.codec == .pcma)
}

// MARK: Passthrough and the call's rate

/// Trunk and platform codecs: passthrough, and the PCM rate when transcoded (a tap).
private let callRows: [(AudioCodec, AudioCodec, Bool, Int)] = [
    (.opus(.init()), .opus(.init(complexity: 9)), true, 16_000),
    (.g722, .g722, true, 16_000),
    (.pcma, .pcma, true, 8000),
    (.pcmu, .pcmu, true, 8000),
    (.opus(.init()), .pcmu, false, 8000),
    (.pcma, .opus(.init()), false, 8000),
    (.g722, .opus(.init()), false, 16_000),
    (.opus(.init()), .g722, false, 16_000),
    (.pcmu, .pcma, false, 8000)
]

@Test(arguments: callRows)
func sameCodecBothLegsPassesThrough(trunk: AudioCodec, platform: AudioCodec, passthrough: Bool, rate: Int) {
    let c = MediaCallConfiguration(
        trunk: .init(codec: trunk, payloadType: 96, remote: nil),
        platform: .init(codec: platform, payloadType: 111, remote: nil))
    #expect(c.isPassthrough == passthrough)
    #expect(c.callSampleRate == rate)
}

// MARK: The profile

private func profile(media: String) throws(ProfileError) -> TrunkProfile {
    try ProfileLoader.parse(
        #"{ name: "t", outbound: { proxies: ["sip:127.0.0.1:5090"] }, media: \#(media) }"#, file: "trunk.json5")
}

@Test func opusIsATrunkCodecAndOpusTrunkSetsOurFmtp() throws {
    let p = try profile(
        media:
            #"{ codecs: ["opus", "PCMU"], opusTrunk: { maxPlaybackRate: 8000, useInbandFEC: false, useDTX: true, maxAverageBitrate: 24000, stereo: false } }"#
    )
    #expect(p.media.codecs == [.opus, .pcmu])
    #expect(
        p.media.opusTrunk
            == .init(
                maxPlaybackRate: 8000, maxCaptureRate: 8000, maxAverageBitrate: 24_000, stereo: false,
                spropStereo: false, useInbandFEC: false, useDTX: true))
    let defaults = try profile(media: #"{ codecs: ["opus"] }"#)
    #expect(defaults.media.opusTrunk == TrunkProfile.MediaSettings.defaultOpusTrunk)
    #expect(defaults.media.trunkCodecs(opus: .init(complexity: 2)).names == ["opus"])
}

/// Profile `media` text, the key path its refusal names, and its message.
private let badTrunkValues: [(String, String, String)] = [
    (
        #"{ codecs: ["OPUS"] }"#, "media.codecs[0]",
        #"must be one of "PCMU", "PCMA", "G722", "opus", found "OPUS""#
    ),
    (#"{ codecs: ["opus", "opus"] }"#, "media.codecs[1]", "opus is listed twice"),
    (
        "{ opusTrunk: { maxPlaybackRate: 4000 } }", "media.opusTrunk.maxPlaybackRate",
        "must be from 8000 to 48000, found 4000"
    ),
    (
        "{ opusTrunk: { maxAverageBitrate: 600000 } }", "media.opusTrunk.maxAverageBitrate",
        "must be from 6000 to 510000, found 600000"
    ),
    (
        #"{ opusTrunk: { useInbandFEC: "yes" } }"#, "media.opusTrunk.useInbandFEC",
        #"expected true or false, found string "yes""#
    ),
    ("{ opusTrunk: { usedtx: true } }", "media.opusTrunk.usedtx", "unknown key"),
    ("{ opusTrunk: 5 }", "media.opusTrunk", "expected an object, found number 5")
]

@Test(arguments: badTrunkValues)
func badOpusTrunkValuesAreRefusedNamingFileAndKey(text: String, keyPath: String, message: String) {
    let error = #expect(throws: ProfileError.self) { try profile(media: text) }
    #expect(error?.description.hasPrefix("trunk.json5: \(keyPath): \(message)") == true, "\(String(describing: error))")
}
