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
        let entry: (String, Int, Int?)? =
            switch payloadType {
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
            let rate = sdpDecimal(encoding[1]), rate > 0, rate <= UInt64(Int32.max)
        else {
            throw SDPError(line: line, reason: "rtpmap must be <payload type> <encoding>/<clock rate>[/<channels>]")
        }
        var channels: Int?
        if encoding.count == 3 {
            guard let count = sdpDecimal(encoding[2]), count >= 1, count <= 255 else {
                throw SDPError(line: line, reason: "rtpmap channel count '\(encoding[2])' is not a number 1-255")
            }
            channels = Int(count)
        }
        return RTPMap(
            payloadType: Int(number), encodingName: String(encoding[0]), clockRate: Int(rate),
            channels: channels)
    }

    /// The value of the `a=rtpmap` attribute (without "rtpmap:").
    public func serialize() -> String {
        var text = "\(payloadType) \(encodingName)/\(clockRate)"
        if let channels { text += "/\(channels)" }
        return text
    }
}
