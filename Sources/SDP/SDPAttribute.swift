/// `a=`: a property attribute (`a=sendrecv`, no value) or a value attribute
/// (`a=rtpmap:0 PCMU/8000`).
///
/// ```
/// attribute-field = %s"a" "=" attribute CRLF
/// attribute       = (attribute-name ":" attribute-value) / attribute-name
/// ```
public struct SDPAttribute: Sendable, Equatable {
    /// The name before any ':'.
    public var name: String
    /// The text after the first ':', or nil for a property attribute.
    public var value: String?

    /// An attribute with the given name and optional value.
    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
    }

    /// `a=rtpmap:<map>`.
    public static func rtpmap(_ map: RTPMap) -> SDPAttribute {
        SDPAttribute(name: "rtpmap", value: map.serialize())
    }

    /// `a=fmtp:<payload type> <parameters>`.
    public static func fmtp(payloadType: Int, _ parameters: String) -> SDPAttribute {
        SDPAttribute(name: "fmtp", value: "\(payloadType) \(parameters)")
    }

    /// `a=ptime:<milliseconds>`.
    public static func ptime(_ milliseconds: Int) -> SDPAttribute {
        SDPAttribute(name: "ptime", value: String(milliseconds))
    }

    /// `a=sendrecv` and the like.
    public static func direction(_ direction: MediaDirection) -> SDPAttribute {
        SDPAttribute(name: direction.rawValue)
    }

    /// `a=mid:<identification-tag>` (RFC 9143 §9.1).
    public static func mid(_ tag: String) -> SDPAttribute {
        SDPAttribute(name: "mid", value: tag)
    }

    /// `a=ice-ufrag:<ufrag>` (RFC 8839 §5.4).
    public static func iceUfrag(_ ufrag: String) -> SDPAttribute {
        SDPAttribute(name: "ice-ufrag", value: ufrag)
    }

    /// `a=ice-pwd:<password>` (RFC 8839 §5.4).
    public static func icePwd(_ password: String) -> SDPAttribute {
        SDPAttribute(name: "ice-pwd", value: password)
    }

    /// `a=fingerprint:<hash-func> <fingerprint>` (RFC 8122 §5).
    public static func fingerprint(_ fingerprint: SDPFingerprint) -> SDPAttribute {
        SDPAttribute(name: "fingerprint", value: fingerprint.value)
    }

    /// `a=setup:<role>` (RFC 4145 §4).
    public static func setup(_ role: SDPSetupRole) -> SDPAttribute {
        SDPAttribute(name: "setup", value: role.rawValue)
    }

    /// `a=candidate:<candidate>` (RFC 8839 §5.1).
    public static func candidate(_ candidate: SDPCandidate) -> SDPAttribute {
        candidate.attribute
    }

    /// `a=rtcp-mux` (RFC 5761 §5.1.1).
    public static let rtcpMux = SDPAttribute(name: "rtcp-mux")

    /// `a=end-of-candidates` (RFC 8840 §8.2).
    public static let endOfCandidates = SDPAttribute(name: "end-of-candidates")

    /// `a=ice-lite` (RFC 8839 §5.3).
    public static let iceLite = SDPAttribute(name: "ice-lite")

    /// Parses the value of an `a=` line (without "a=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPAttribute {
        guard let colon = value.firstIndex(of: ":") else {
            guard !value.isEmpty else { throw SDPError(line: line, reason: "a= has no attribute name") }
            return SDPAttribute(name: value)
        }
        guard colon != value.startIndex else {
            throw SDPError(line: line, reason: "a= has no attribute name before ':'")
        }
        return SDPAttribute(name: String(value[..<colon]), value: String(value[value.index(after: colon)...]))
    }

    /// The value of the `a=` line (without "a=").
    public func serialize() -> String {
        if let value { return name + ":" + value }
        return name
    }
}
