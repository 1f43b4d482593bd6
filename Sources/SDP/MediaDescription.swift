// One m= section of an SDP description and what its attributes say about the stream.

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
        return MediaDescription(
            media: "audio", port: port, formats: maps.map { String($0.payloadType) },
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

    /// Whether `proto` is secure RTP keyed in the SDP or by DTLS (`RTP/SAVP`, `RTP/SAVPF`,
    /// `UDP/TLS/RTP/SAVP(F)`).
    public var isSecureRTP: Bool { proto.uppercased().contains("RTP/SAVP") }

    /// DTLS-SRTP with ICE, as browsers offer it: `UDP/TLS/RTP/SAVPF` (RFC 5764 §8), or
    /// `UDP/TLS/RTP/SAVP`.
    public var isDTLSSRTP: Bool { proto.uppercased().hasPrefix("UDP/TLS/RTP/SAVP") }

    /// The stream's `a=crypto` lines that parse, in order (RFC 4568: the offerer's order is
    /// its preference). Lines that do not parse are left out: the answerer ignores them.
    public var cryptos: [SDESCrypto] {
        attributes.values(named: "crypto").compactMap { try? SDESCrypto.parse($0) }
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
    public var telephoneEventPayloadType: Int? { telephoneEvent(clockRate: 8000)?.payloadType }

    /// The `telephone-event` (RFC 4733) to use beside an audio codec of `clockRate`: the one at
    /// that clock (events share the audio's RTP clock: an Opus stream's at 48000), else the
    /// 8000 Hz one, else the first.
    public func telephoneEvent(clockRate: Int) -> RTPMap? {
        let events = rtpMaps.filter { $0.encodingName.lowercased() == "telephone-event" }
        return events.first { $0.clockRate == clockRate } ?? events.first { $0.clockRate == 8000 } ?? events.first
    }

    /// Adds a `telephone-event` format (its rtpmap and `fmtp 0-16`) after the stream's other
    /// rtpmap and fmtp lines.
    public mutating func addTelephoneEvent(_ map: RTPMap) {
        formats.append(String(map.payloadType))
        let at = (attributes.lastIndex { $0.name == "rtpmap" || $0.name == "fmtp" }).map { $0 + 1 } ?? 0
        attributes.insert(contentsOf: [.rtpmap(map), .fmtp(payloadType: map.payloadType, "0-16")], at: at)
    }

    /// The RTCP port from `a=rtcp:<port> [nettype addrtype address]` (RFC 3605).
    public var rtcpPort: UInt16? {
        guard let value = attributes.first(named: "rtcp")?.value,
            let first = value.split(separator: " ").first,
            let number = sdpDecimal(first), number <= 65_535
        else { return nil }
        return UInt16(number)
    }

    /// Whether `a=rtcp-mux` (RFC 5761) is present.
    public var rtcpMux: Bool { attributes.contains(named: "rtcp-mux") }

    /// The stream's `a=candidate` lines that parse, in order (RFC 8839 §5.1); lines that do
    /// not parse are left out, as an ICE agent ignores them.
    public var candidates: [SDPCandidate] {
        attributes.values(named: "candidate").compactMap { try? SDPCandidate.parse($0) }
    }

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
        return MediaDescription(
            media: parts[0], port: UInt16(portNumber), portCount: portCount,
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
        !digits.isEmpty, digits.count <= 9
    else { return nil }
    return Int(digits)
}
