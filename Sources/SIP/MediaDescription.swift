// One m= section of an SDP description, the RTP payload maps it declares, and the stream
// direction of RFC 3264.

/// A media description: an `m=` line and the `c=`, `b=` and `a=` lines that follow it
/// (RFC 8866 §5.14).
///
/// ```
/// media-description = media-field [information-field] *connection-field
///                     *bandwidth-field [key-field] *attribute-field
/// media-field       = %s"m" "=" media SP port ["/" integer] SP proto 1*(SP fmt) CRLF
/// ```
public struct MediaDescription: Sendable, Equatable {
    /// "audio", "video", "image", "application", ...
    public var media: String
    /// The transport port; 0 rejects or disables the stream (RFC 3264 §6).
    public var port: UInt16
    /// The number of consecutive ports after "/", when given.
    public var portCount: Int?
    /// The transport protocol: "RTP/AVP", "RTP/SAVP", "udptl", ...
    public var proto: String
    /// The formats; RTP payload type numbers for RTP profiles, in preference order.
    public var formats: [String]
    /// Media-level `c=`, overriding the session-level one.
    public var connection: SDPConnection?
    /// Media-level `b=` lines.
    public var bandwidths: [SDPBandwidth]
    /// Media-level `a=` lines, in order.
    public var attributes: [SDPAttribute]
    /// Media-level lines kept verbatim but not interpreted (`i=`, `k=`, unknown letters).
    public var otherFields: [SDPField]

    /// A media description with the given fields.
    public init(
        media: String,
        port: UInt16,
        portCount: Int? = nil,
        proto: String = "RTP/AVP",
        formats: [String],
        connection: SDPConnection? = nil,
        bandwidths: [SDPBandwidth] = [],
        attributes: [SDPAttribute] = [],
        otherFields: [SDPField] = []
    ) {
        self.media = media
        self.port = port
        self.portCount = portCount
        self.proto = proto
        self.formats = formats
        self.connection = connection
        self.bandwidths = bandwidths
        self.attributes = attributes
        self.otherFields = otherFields
    }

    /// An RTP/AVP audio stream offering `codecs` in order, then `telephoneEvent` (RFC 4733)
    /// with "fmtp 0-16", an optional `a=ptime` and an explicit direction attribute. Every
    /// payload type gets an `a=rtpmap`, static ones included, as most endpoints expect.
    public static func audio(
        port: UInt16,
        codecs: [RTPMap],
        telephoneEvent: RTPMap? = nil,
        ptime: Int? = nil,
        direction: MediaDirection = .sendrecv,
        connection: SDPConnection? = nil
    ) -> MediaDescription {
        let maps = codecs + (telephoneEvent.map { [$0] } ?? [])
        var attributes = maps.map(SDPAttribute.rtpmap)
        if let telephoneEvent {
            attributes.append(.fmtp(payloadType: telephoneEvent.payloadType, "0-16"))
        }
        if let ptime { attributes.append(.ptime(ptime)) }
        attributes.append(.direction(direction))
        return MediaDescription(media: "audio", port: port, formats: maps.map { String($0.payloadType) },
                                connection: connection, attributes: attributes)
    }

    // MARK: Helpers

    /// Whether the stream is rejected or disabled (port 0).
    public var isRejected: Bool { port == 0 }

    /// Whether `proto` is an RTP profile (RTP/AVP, RTP/SAVP, UDP/TLS/RTP/SAVPF, ...), whose
    /// formats are payload type numbers.
    public var isRTP: Bool { proto.uppercased().contains("RTP/") }

    /// RTP without encryption: `RTP/AVP` or `RTP/AVPF` (not SAVP, SAVPF or UDP/TLS/...).
    public var isPlainRTP: Bool {
        let p = proto.uppercased()
        return p == "RTP/AVP" || p == "RTP/AVPF"
    }

    /// The payload maps of the formats, in `m=` order: the stream's valid `a=rtpmap` for a
    /// payload type, else the static assignment of RFC 3551 (0 PCMU, 8 PCMA, 9 G722, 13 CN,
    /// 18 G729, ...). Formats with neither, and malformed `a=rtpmap` lines, are left out.
    public var rtpMaps: [RTPMap] {
        guard isRTP else { return [] }
        let declared = attributes.values(named: "rtpmap").compactMap { try? RTPMap.parse($0) }
        return formats.compactMap { format in
            guard let number = sdpDecimal(format), number <= 127 else { return nil }
            let payloadType = Int(number)
            return declared.first { $0.payloadType == payloadType } ?? RTPMap.staticPayloadType(payloadType)
        }
    }

    /// The payload map for one payload type, when it is among the formats.
    public func rtpMap(for payloadType: Int) -> RTPMap? {
        rtpMaps.first { $0.payloadType == payloadType }
    }

    /// The format parameters of `a=fmtp:<payload type> <parameters>`, without the number.
    public func fmtp(for payloadType: Int) -> String? {
        let key = String(payloadType)
        for value in attributes.values(named: "fmtp") {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let first = parts.first, first == key else { continue }
            return parts.count > 1 ? String(parts[1]) : ""
        }
        return nil
    }

    /// `a=ptime`, in milliseconds (a fractional value such as "20.0" gives its whole part).
    public var ptime: Int? { leadingInteger(attributes.first(named: "ptime")?.value) }

    /// `a=maxptime`, in milliseconds.
    public var maxptime: Int? { leadingInteger(attributes.first(named: "maxptime")?.value) }

    /// The stream's direction: its own direction attribute, or `sendrecv`. This ignores a
    /// session-level attribute; use ``SessionDescription/direction(ofMedia:)`` for the
    /// resolved value. Setting it replaces every direction attribute of the stream.
    public var direction: MediaDirection {
        get { attributes.direction ?? .sendrecv }
        set { attributes.setDirection(newValue) }
    }

    /// The stream's own direction attribute, if it has one.
    public var explicitDirection: MediaDirection? { attributes.direction }

    /// The payload type of `telephone-event` (RFC 4733 DTMF), preferring the 8000 Hz clock.
    public var telephoneEventPayloadType: Int? {
        let events = rtpMaps.filter { $0.encodingName.lowercased() == "telephone-event" }
        return (events.first { $0.clockRate == 8000 } ?? events.first)?.payloadType
    }

    /// The RTCP port from `a=rtcp:<port> [nettype addrtype address]` (RFC 3605).
    public var rtcpPort: UInt16? {
        guard let value = attributes.first(named: "rtcp")?.value,
              let first = value.split(separator: " ").first,
              let number = sdpDecimal(first), number <= 65_535 else { return nil }
        return UInt16(number)
    }

    /// Whether `a=rtcp-mux` (RFC 5761) is present.
    public var rtcpMux: Bool { attributes.contains(named: "rtcp-mux") }

    // MARK: Wire

    /// Parses the value of an `m=` line (without "m=") into a description with no other lines.
    static func parseMediaLine(_ value: String, line: Int) throws(SDPError) -> MediaDescription {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count >= 4 else {
            throw SDPError(line: line, reason: "m= needs <media> <port> <proto> <fmt>..., found \(parts.count) fields")
        }
        let portParts = parts[1].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let portNumber = sdpDecimal(portParts[0]) else {
            throw SDPError(line: line, reason: "m= port '\(portParts[0])' is not a number")
        }
        guard portNumber <= 65_535 else {
            throw SDPError(line: line, reason: "m= port \(portNumber) is outside 0-65535")
        }
        var portCount: Int?
        if portParts.count == 2 {
            guard let count = sdpDecimal(portParts[1]), count >= 1, count <= 65_535 else {
                throw SDPError(line: line, reason: "m= port count '\(portParts[1])' is not a positive number")
            }
            portCount = Int(count)
        }
        return MediaDescription(media: parts[0], port: UInt16(portNumber), portCount: portCount,
                                proto: parts[2], formats: Array(parts[3...]))
    }

    /// The value of the `m=` line (without "m=").
    func mediaLine() -> String {
        var port = String(self.port)
        if let portCount { port += "/\(portCount)" }
        return ([media, port, proto] + formats).joined(separator: " ")
    }
}

/// The digits at the start of an attribute value.
private func leadingInteger(_ value: String?) -> Int? {
    guard let digits = value?.drop(while: { $0 == " " }).prefix(while: { $0.isASCII && $0.isNumber }),
          !digits.isEmpty, digits.count <= 9 else { return nil }
    return Int(digits)
}

/// `a=rtpmap`: what an RTP payload type carries (RFC 8866 §6.6).
///
/// ```
/// rtpmap-value = payload-type SP encoding-name "/" clock-rate [ "/" encoding-params ]
/// ```
public struct RTPMap: Sendable, Hashable {
    /// The payload type, 0-127.
    public var payloadType: Int
    /// The encoding name as written ("PCMU", "opus", "telephone-event"); compare it ignoring case.
    public var encodingName: String
    /// The RTP clock rate in Hz.
    public var clockRate: Int
    /// The audio channel count, when written.
    public var channels: Int?

    /// A payload map with the given fields.
    public init(payloadType: Int, encodingName: String, clockRate: Int, channels: Int? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    /// G.711 µ-law, static payload type 0.
    public static let pcmu = RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000)
    /// G.711 A-law, static payload type 8.
    public static let pcma = RTPMap(payloadType: 8, encodingName: "PCMA", clockRate: 8000)
    /// G.722, static payload type 9 (its RTP clock is 8000 although it samples at 16 kHz).
    public static let g722 = RTPMap(payloadType: 9, encodingName: "G722", clockRate: 8000)
    /// Comfort noise (RFC 3389), static payload type 13.
    public static let cn = RTPMap(payloadType: 13, encodingName: "CN", clockRate: 8000)
    /// G.729, static payload type 18.
    public static let g729 = RTPMap(payloadType: 18, encodingName: "G729", clockRate: 8000)

    /// RFC 4733 telephone events (DTMF) on a dynamic payload type; 101 at 8000 Hz by default.
    public static func telephoneEvent(payloadType: Int = 101, clockRate: Int = 8000) -> RTPMap {
        RTPMap(payloadType: payloadType, encodingName: "telephone-event", clockRate: clockRate)
    }

    /// The static assignment of RFC 3551 §6 for a payload type, if it has one.
    public static func staticPayloadType(_ payloadType: Int) -> RTPMap? {
        let entry: (String, Int, Int?)? = switch payloadType {
        case 0: ("PCMU", 8000, nil)
        case 3: ("GSM", 8000, nil)
        case 4: ("G723", 8000, nil)
        case 5: ("DVI4", 8000, nil)
        case 6: ("DVI4", 16000, nil)
        case 7: ("LPC", 8000, nil)
        case 8: ("PCMA", 8000, nil)
        case 9: ("G722", 8000, nil)
        case 10: ("L16", 44100, 2)
        case 11: ("L16", 44100, nil)
        case 12: ("QCELP", 8000, nil)
        case 13: ("CN", 8000, nil)
        case 14: ("MPA", 90000, nil)
        case 15: ("G728", 8000, nil)
        case 16: ("DVI4", 11025, nil)
        case 17: ("DVI4", 22050, nil)
        case 18: ("G729", 8000, nil)
        case 25: ("CelB", 90000, nil)
        case 26: ("JPEG", 90000, nil)
        case 28: ("nv", 90000, nil)
        case 31: ("H261", 90000, nil)
        case 32: ("MPV", 90000, nil)
        case 33: ("MP2T", 90000, nil)
        case 34: ("H263", 90000, nil)
        default: nil
        }
        guard let (name, rate, channels) = entry else { return nil }
        return RTPMap(payloadType: payloadType, encodingName: name, clockRate: rate, channels: channels)
    }

    /// Whether `other` is the same codec: same name ignoring case, same clock rate and same
    /// channel count (an absent count meaning 1). Payload types may differ.
    public func isSameCodec(as other: RTPMap) -> Bool {
        encodingName.lowercased() == other.encodingName.lowercased()
            && clockRate == other.clockRate
            && (channels ?? 1) == (other.channels ?? 1)
    }

    /// Parses the value of an `a=rtpmap` attribute (without "rtpmap:").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> RTPMap {
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, let number = sdpDecimal(parts[0]), number <= 127 else {
            throw SDPError(line: line, reason: "rtpmap must start with a payload type 0-127")
        }
        let encoding = parts[1].split(separator: "/", omittingEmptySubsequences: false)
        guard encoding.count == 2 || encoding.count == 3, !encoding[0].isEmpty,
              let rate = sdpDecimal(encoding[1]), rate > 0, rate <= UInt64(Int32.max) else {
            throw SDPError(line: line, reason: "rtpmap must be <payload type> <encoding>/<clock rate>[/<channels>]")
        }
        var channels: Int?
        if encoding.count == 3 {
            guard let count = sdpDecimal(encoding[2]), count >= 1, count <= 255 else {
                throw SDPError(line: line, reason: "rtpmap channel count '\(encoding[2])' is not a number 1-255")
            }
            channels = Int(count)
        }
        return RTPMap(payloadType: Int(number), encodingName: String(encoding[0]), clockRate: Int(rate),
                      channels: channels)
    }

    /// The value of the `a=rtpmap` attribute (without "rtpmap:").
    public func serialize() -> String {
        var text = "\(payloadType) \(encodingName)/\(clockRate)"
        if let channels { text += "/\(channels)" }
        return text
    }
}

/// The direction of a stream from the point of view of whoever wrote the description
/// (RFC 8866 §6.7, RFC 3264 §5.1).
public enum MediaDirection: String, Sendable, CaseIterable {
    /// Sends and receives (the default when no attribute is given).
    case sendrecv
    /// Only sends; an offer of `sendonly` puts the peer on hold.
    case sendonly
    /// Only receives.
    case recvonly
    /// Neither sends nor receives.
    case inactive

    /// The direction from the two capabilities.
    public init(sending: Bool, receiving: Bool) {
        switch (sending, receiving) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    /// Whether the writer sends media.
    public var isSending: Bool { self == .sendrecv || self == .sendonly }

    /// Whether the writer expects to receive media.
    public var isReceiving: Bool { self == .sendrecv || self == .recvonly }

    /// Whether an offer with this direction puts the other side on hold (`sendonly` or
    /// `inactive`, RFC 3264 §8.4).
    public var isHold: Bool { self == .sendonly || self == .inactive }

    /// The direction an answerer that accepts everything uses for an offer with this
    /// direction (RFC 3264 §6.1): sendonly→recvonly, recvonly→sendonly, others unchanged.
    public var answer: MediaDirection {
        MediaDirection(sending: isReceiving, receiving: isSending)
    }

    /// The answer when the answerer itself wants only `local` (for example `sendonly` while it
    /// holds the call): the mirror of this offer narrowed to what `local` allows.
    public func answer(limitedTo local: MediaDirection) -> MediaDirection {
        let mirror = answer
        return MediaDirection(sending: mirror.isSending && local.isSending,
                              receiving: mirror.isReceiving && local.isReceiving)
    }
}
