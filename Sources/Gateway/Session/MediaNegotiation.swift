import IOCore
import IrisAPI
import Media
import SDP
import SIP

/// Why an SDP could not be used; an offer from the app is a -103 API error, one from the
/// carrier a 488.
public struct NegotiationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The SDP asked for a secure transport profile (SRTP, DTLS): a 488 says so with
    /// `Warning: 302` (incompatible transport protocol, RFC 3261 §20.43).
    public var secure: Bool
    public init(_ message: String, secure: Bool = false) {
        self.message = message
        self.secure = secure
    }

    /// The Warning header a 488 for this error carries.
    public var warning: String {
        secure ? "302 irisgw \"Incompatible transport protocol\"" : "305 irisgw \"Incompatible media format\""
    }
    public var description: String { message }
}

/// One leg's negotiated media: codec, payload types and where the peer listens.
public struct NegotiatedLeg: Sendable, Equatable {
    public var codec: AudioCodec
    public var rtpMap: RTPMap
    public var telephoneEvent: RTPMap?
    public var remote: SocketAddress?
    public var direction: MediaDirection
    /// The transport profile our SDP for this leg says (`RTP/AVP`, `RTP/SAVP`).
    public var proto = "RTP/AVP"
    /// Our `a=crypto` line in force (SDES), written into our answers and re-offers.
    public var crypto: SDESCrypto?
    /// SRTP keys for this leg; nil: plain RTP.
    public var srtp: SRTPConfiguration?
    /// The platform leg of a browser or SFU: ICE-lite and DTLS-SRTP (`WebRTCAnswer`).
    public var webrtc: WebRTCLegParameters?
    /// Our `a=fmtp` for `rtpMap` in our answers and re-offers (a trunk's Opus: what we ask
    /// to receive, RFC 7587); nil: the default for the codec.
    public var formatParameters: String?

    public init(
        codec: AudioCodec, rtpMap: RTPMap, telephoneEvent: RTPMap?, remote: SocketAddress?, direction: MediaDirection
    ) {
        self.codec = codec
        self.rtpMap = rtpMap
        self.telephoneEvent = telephoneEvent
        self.remote = remote
        self.direction = direction
    }

    /// The media engine's settings for this leg.
    public func configuration(inbandDTMF: Bool = false) -> MediaLegConfiguration {
        var c = MediaLegConfiguration(
            codec: codec, payloadType: UInt8(rtpMap.payloadType),
            telephoneEventPayloadType: telephoneEvent.map { UInt8($0.payloadType) },
            remote: remote, inbandDTMF: inbandDTMF, srtp: srtp)
        c.webrtc = webrtc?.media
        return c
    }

    /// Takes the outcome of an SDES exchange: the profile, our line and the keys.
    mutating func adopt(_ exchange: SDESExchange) {
        proto = exchange.proto
        crypto = exchange.local
        srtp = exchange.srtp
    }

    /// HD for the quality indicator: wideband on the trunk (G.722 or Opus).
    public var isWideband: Bool { codec.isWideband }
}

/// What a trunk offers and accepts: the profile's codecs in order of preference and, for
/// Opus, the encoder settings we start from (the peer's fmtp is laid over them) and the
/// fmtp we ask for.
public struct TrunkCodecs: Sendable, Equatable {
    /// SDP encoding names: `PCMU`, `PCMA`, `G722`, `opus`.
    public var names: [String]
    /// Our Opus encoder toward the trunk before the peer's fmtp (`OpusFormatParameters.encoding`).
    public var opus: AudioCodec.OpusSettings
    /// Our Opus fmtp: what we ask the trunk to send.
    public var opusFormat: OpusFormatParameters

    public init(
        names: [String], opus: AudioCodec.OpusSettings = .init(), opusFormat: OpusFormatParameters = .init()
    ) {
        self.names = names
        self.opus = opus
        self.opusFormat = opusFormat
    }
}

/// SDP offer/answer for both legs (RFC 3264), one audio stream each. The gateway offers
/// the trunk the profile's codecs and answers the app with the codec it prefers.
public enum MediaNegotiation {
    /// The payload type of Opus in our offers (dynamic; 111 is what most stacks use).
    static let opusPayloadType = 111
    /// telephone-event at Opus's 48000 clock, offered beside the 8000 Hz one (101).
    static let opusTelephoneEventPayloadType = 110

    /// Codecs either side can use, by SDP encoding name (any case); Opus encodes with `opus`.
    static func trunkCodec(named name: String, opus: AudioCodec.OpusSettings = .init()) -> (AudioCodec, RTPMap)? {
        switch name.uppercased() {
        case "PCMU": (.pcmu, .pcmu)
        case "PCMA": (.pcma, .pcma)
        case "G722": (.g722, .g722)
        case "OPUS":
            (.opus(opus), RTPMap(payloadType: opusPayloadType, encodingName: "opus", clockRate: 48_000, channels: 2))
        default: nil
        }
    }

    /// The map of `m` for the codec `name`: Opus only at its 48 kHz clock (RFC 7587 §7).
    static func offered(_ name: String, in m: MediaDescription) -> RTPMap? {
        let isOpus = name.lowercased() == "opus"
        return m.rtpMaps.first {
            $0.encodingName.uppercased() == name.uppercased() && (!isOpus || $0.clockRate == 48_000)
        }
    }

    /// The codec the platform leg takes from `m`: `prefer` (the codec the trunk will most
    /// likely use, so the call can pass packets through) when offered, else Opus, else PCMU.
    static func platformCodec(
        of m: MediaDescription, prefer: String?, opus: AudioCodec.OpusSettings
    ) -> (AudioCodec, RTPMap)? {
        for name in [prefer, "opus", "PCMU"].compactMap({ $0 }) {
            if let map = offered(name, in: m), let (codec, _) = trunkCodec(named: name, opus: opus) {
                return (codec, map)
            }
        }
        return nil
    }

    /// The first usable audio stream of `sdp` and its remote address. `sdes`: RTP/SAVP(F)
    /// streams count too (the trunk leg keys them with `SDESExchange`).
    static func audio(
        of sdp: SessionDescription, sdes: Bool = false
    ) throws(NegotiationError) -> (index: Int, media: MediaDescription, remote: SocketAddress?) {
        // Otherwise plain RTP only: an RTP/SAVP(F) or DTLS stream asks for encryption we
        // cannot give, and answering it with RTP/AVP is what RFC 3264 §6 forbids.
        let live = sdp.media.filter { $0.media == "audio" && $0.isRTP && !$0.isRejected }
        func usable(_ m: MediaDescription) -> Bool {
            m.media == "audio" && !m.isRejected
                && (m.isPlainRTP || (sdes && ["RTP/SAVP", "RTP/SAVPF"].contains(m.proto.uppercased())))
        }
        guard let index = sdp.media.firstIndex(where: usable) else {
            if let secure = live.first {
                throw NegotiationError(
                    "the audio stream requires encrypted media (\(secure.proto)), which is not supported", secure: true)
            }
            throw NegotiationError("no RTP audio stream in the SDP")
        }
        let m = sdp.media[index]
        let address = sdp.connection(ofMedia: index).flatMap { $0.isNullAddress ? nil : $0.address }
        return (index, m, address.map { SocketAddress(host: $0, port: Int(m.port)) })
    }

    /// The audio stream a WebRTC peer offers (DTLS-SRTP): the platform leg answers it
    /// before any plain RTP one.
    static func webRTCAudio(of sdp: SessionDescription) -> Int? {
        sdp.media.firstIndex { $0.media == "audio" && !$0.isRejected && $0.isDTLSSRTP }
    }

    /// True when the platform leg would answer `text` as WebRTC (ICE, DTLS-SRTP); false for
    /// plain RTP, SDES and text that is not SDP. A page token may offer nothing else: its
    /// media can only go to the ICE-checked address of the browser that holds it.
    public static func isWebRTCOffer(_ text: String) -> Bool {
        guard let sdp = try? SessionDescription.parse(text) else { return false }
        return webRTCAudio(of: sdp) != nil
    }

    /// Reads the app's offer: `prefer` when offered (the codec the trunk will most likely
    /// use: PCMU, PCMA, G722 or opus, so the call needs no transcoding), else Opus (48000/2,
    /// RFC 7587), else PCMU. A WebRTC offer always gets Opus.
    public static func platformLeg(
        offer text: String, prefer: String?, opus: AudioCodec.OpusSettings
    ) throws(NegotiationError) -> NegotiatedLeg {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch {
            throw NegotiationError("media.sdp is not valid SDP: \(error)")
        }
        if let index = webRTCAudio(of: sdp) {
            return try webrtcLeg(sdp, index: index, opus: opus)
        }
        let (index, m, remote) = try audio(of: sdp)
        guard let chosen = platformCodec(of: m, prefer: prefer, opus: opus) else {
            throw NegotiationError("media.sdp offers neither opus/48000/2 nor PCMU")
        }
        let te = m.telephoneEvent(clockRate: chosen.1.clockRate)
        return NegotiatedLeg(
            codec: chosen.0, rtpMap: chosen.1, telephoneEvent: te, remote: remote,
            direction: sdp.direction(ofMedia: index).answer)
    }

    /// Reads the carrier's answer (or offer, inbound): the first format we can use, in the
    /// carrier's order, among the profile's codecs. Opus (only `opus/48000`) encodes toward
    /// the carrier as its fmtp asks (`OpusFormatParameters.encoding`); our answers carry our
    /// own fmtp (`codecs.opusFormat`).
    public static func trunkLeg(
        _ sdp: SessionDescription, codecs: TrunkCodecs
    ) throws(NegotiationError) -> NegotiatedLeg {
        let (index, m, remote) = try audio(of: sdp, sdes: true)
        let allowedSet = Set(codecs.names.map { $0.uppercased() })
        for map in m.rtpMaps where allowedSet.contains(map.encodingName.uppercased()) {
            guard let (codec, _) = trunkCodec(named: map.encodingName, opus: codecs.opus) else { continue }
            var formatParameters: String?
            var chosen = codec
            if case .opus(let base) = codec {
                guard map.clockRate == 48_000 else { continue }
                chosen = .opus(OpusFormatParameters(fmtp: m.fmtp(for: map.payloadType)).encoding(base))
                formatParameters = codecs.opusFormat.fmtp
            }
            let te = m.telephoneEvent(clockRate: map.clockRate)
            var leg = NegotiatedLeg(
                codec: chosen, rtpMap: map, telephoneEvent: te, remote: remote, direction: sdp.direction(ofMedia: index)
            )
            leg.formatParameters = formatParameters
            return leg
        }
        throw NegotiationError("no common codec (we accept \(codecs.names.joined(separator: ", ")))")
    }

    /// Reads the trunk's SDP into `exchange` (its answer to our offer, or its offer) and
    /// `leg` takes the outcome. Throws when the SDES policy refuses the SDP.
    static func applySDES(
        _ sdp: SessionDescription, isOffer: Bool, to exchange: inout SDESExchange, leg: inout NegotiatedLeg
    ) throws(NegotiationError) {
        let m = try audio(of: sdp, sdes: true).media
        if isOffer { _ = try exchange.answer(m) } else { try exchange.receiveAnswer(m) }
        leg.adopt(exchange)
    }

    /// Our offer to the trunk: the profile's codecs in order, telephone-event when the
    /// profile uses RFC 4733, and SDES lines when the trunk's SRTP policy offers keys.
    public static func trunkOffer(
        address: SocketAddress, codecs: TrunkCodecs, telephoneEvent: Bool, session: SDPSessionIdentity,
        direction: MediaDirection = .sendrecv, proto: String = "RTP/AVP",
        cryptos: [SDESCrypto] = []
    ) -> SessionDescription {
        let maps = codecs.names.compactMap { trunkCodec(named: $0)?.1 }
        var sdp = describe(
            address: address, maps: maps, telephoneEvent: telephoneEvent ? .telephoneEvent(payloadType: 101) : nil,
            session: session, direction: direction)
        let fmtp = codecs.opusFormat.fmtp
        let offersOpus = maps.contains { $0.payloadType == opusPayloadType }
        if offersOpus, !fmtp.isEmpty {
            // After the codecs' rtpmap lines, before telephone-event's.
            sdp.media[0].attributes.insert(.fmtp(payloadType: opusPayloadType, fmtp), at: maps.count)
        }
        if offersOpus, telephoneEvent {
            // Events share their audio's RTP clock: Opus's is 48000 (RFC 4733 §2.1, RFC 7587 §4.1).
            sdp.media[0].addTelephoneEvent(
                .telephoneEvent(payloadType: opusTelephoneEventPayloadType, clockRate: 48_000))
        }
        sdp.media[0].proto = proto
        sdp.media[0].attributes.append(contentsOf: cryptos.map(\.attribute))
        return sdp
    }

    /// An answer (either leg) with exactly the chosen codec.
    public static func answer(
        for leg: NegotiatedLeg, address: SocketAddress, session: SDPSessionIdentity,
        direction: MediaDirection? = nil
    ) -> SessionDescription {
        if let webrtc = leg.webrtc {
            return WebRTCAnswer.make(
                offer: webrtc.offer, index: webrtc.index, leg: leg, webrtc: webrtc, address: address,
                session: session, direction: direction ?? leg.direction)
        }
        var attributes: [SDPAttribute] = []
        if let fmtp = leg.formatParameters, !fmtp.isEmpty {
            attributes.append(.fmtp(payloadType: leg.rtpMap.payloadType, fmtp))
        } else if leg.formatParameters == nil, leg.rtpMap.encodingName.lowercased() == "opus" {
            attributes.append(.fmtp(payloadType: leg.rtpMap.payloadType, "minptime=20;useinbandfec=1"))
        }
        var sdp = describe(
            address: address, maps: [leg.rtpMap], telephoneEvent: leg.telephoneEvent, session: session,
            direction: direction ?? leg.direction)
        sdp.media[0].attributes.insert(contentsOf: attributes, at: 1)
        sdp.media[0].proto = leg.proto
        if let crypto = leg.crypto { sdp.media[0].attributes.append(crypto.attribute) }
        return sdp
    }

    private static func describe(
        address: SocketAddress, maps: [RTPMap], telephoneEvent: RTPMap?, session: SDPSessionIdentity,
        direction: MediaDirection
    ) -> SessionDescription {
        let media = MediaDescription.audio(
            port: UInt16(address.port), codecs: maps, telephoneEvent: telephoneEvent,
            ptime: 20, direction: direction)
        return .single(
            media, host: address.host, sessionID: session.id, version: session.version, username: "irisgw",
            sessionName: "irisgw")
    }
}

/// The `o=` identity of one side of a session: the version goes up with every new offer
/// or answer we send (RFC 3264 §8).
public struct SDPSessionIdentity: Sendable, Equatable {
    public var id: String
    public var version: UInt64
    public init(id: String = String(UInt32.random(in: 1...UInt32.max)), version: UInt64 = 1) {
        self.id = id
        self.version = version
    }
    public mutating func next() -> SDPSessionIdentity {
        version += 1
        return self
    }
}
