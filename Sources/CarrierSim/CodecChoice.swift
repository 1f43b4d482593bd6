import Media
import SDP
import SIP

/// The codec of an answer: the offered `a=rtpmap` (its payload type is the offerer's), the
/// Media codec it maps to, and the offer's telephone-event when it had one.
public struct CodecChoice: Sendable, Equatable {
    /// The payload type and encoding as offered.
    public var rtpMap: RTPMap
    /// The codec the media leg runs.
    public var codec: AudioCodec
    /// The offered telephone-event at 8 kHz (RFC 4733), if any.
    public var telephoneEvent: RTPMap?

    /// Encoding names the simulator can answer with.
    public static let supported = ["PCMU", "PCMA", "G722"]

    public init(rtpMap: RTPMap, codec: AudioCodec, telephoneEvent: RTPMap?) {
        self.rtpMap = rtpMap
        self.codec = codec
        self.telephoneEvent = telephoneEvent
    }

    /// The first offered codec we support, or the first of `preferring` the offer has (014
    /// prefers G722); nil when the offer has no audio stream or no codec we support.
    public static func choose(from offer: SessionDescription, preferring: [String] = []) -> CodecChoice? {
        guard let media = offer.media.first(where: { $0.media == "audio" && !$0.isRejected }) else { return nil }
        let maps = media.rtpMaps
        let candidates = maps.filter { m in
            supported.contains { $0.caseInsensitiveCompare(m.encodingName) } && m.clockRate == 8000
        }
        let preferred = preferring.lazy.compactMap { name in
            candidates.first { $0.encodingName.caseInsensitiveCompare(name) }
        }.first
        guard let map = preferred ?? candidates.first, let codec = audioCodec(map.encodingName) else { return nil }
        let te = maps.first { $0.encodingName.caseInsensitiveCompare("telephone-event") && $0.clockRate == 8000 }
        return CodecChoice(rtpMap: map, codec: codec, telephoneEvent: te)
    }

    /// The Media codec for an encoding name we support.
    static func audioCodec(_ name: String) -> AudioCodec? {
        switch name.uppercased() {
        case "PCMU": .pcmu
        case "PCMA": .pcma
        case "G722": .g722
        default: nil
        }
    }

    /// The PCM rate the leg runs at: 16 kHz for G.722, 8 kHz for G.711.
    public var sampleRate: Int { codec.nativeSampleRate ?? 8000 }
}

extension String {
    /// ASCII case-insensitive equality, as SIP and SDP tokens compare.
    func caseInsensitiveCompare(_ other: String) -> Bool { lowercased() == other.lowercased() }
}

/// SDP bodies the simulator sends.
enum SimSDP {
    /// An answer with one codec (and telephone-event when offered) on `port`.
    static func answer(
        _ choice: CodecChoice, host: String, port: UInt16, direction: MediaDirection, version: UInt64 = 1,
        sessionID: String
    ) -> SessionDescription {
        session(
            .audio(
                port: port, codecs: [choice.rtpMap], telephoneEvent: choice.telephoneEvent, ptime: 20,
                direction: direction),
            host: host, version: version, sessionID: sessionID)
    }

    /// Our offer (PCMU, PCMA, G722, telephone-event 101), for a delayed-offer INVITE and for
    /// calls we place.
    static func offer(
        host: String, port: UInt16, codecs: [RTPMap] = [.pcmu, .pcma, .g722], sessionID: String
    ) -> SessionDescription {
        session(
            .audio(port: port, codecs: codecs, telephoneEvent: .telephoneEvent(), ptime: 20), host: host, version: 1,
            sessionID: sessionID)
    }

    static func session(
        _ media: MediaDescription, host: String, version: UInt64, sessionID: String
    ) -> SessionDescription {
        .single(media, host: host, sessionID: sessionID, version: version)
    }

    /// Where the offerer wants RTP: the audio stream's connection address and port.
    static func remoteAddress(_ sdp: SessionDescription) -> SocketAddress? {
        guard let index = sdp.media.firstIndex(where: { $0.media == "audio" && !$0.isRejected }),
            let host = sdp.connection(ofMedia: index)?.address.split(separator: "/").first
        else { return nil }
        return SocketAddress(host: String(host), port: Int(sdp.media[index].port))
    }
}
