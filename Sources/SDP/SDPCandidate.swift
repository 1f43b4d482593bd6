/// `a=candidate`: one ICE candidate as SDP carries it (RFC 8839 §5.1).
///
/// ```
/// candidate-attribute = "candidate" ":" foundation SP component-id SP
///                       transport SP priority SP
///                       connection-address SP port
///                       SP cand-type [SP rel-addr] [SP rel-port]
///                       *(SP cand-extension)
/// foundation          = 1*32ice-char
/// component-id        = 1*3DIGIT
/// transport           = "UDP" / transport-extension
/// priority            = 1*10DIGIT
/// cand-type           = "typ" SP candidate-types
/// candidate-types     = "host" / "srflx" / "prflx" / "relay" / token
/// rel-addr            = "raddr" SP connection-address
/// rel-port            = "rport" SP port
/// cand-extension      = extension-att-name SP extension-att-value
/// ```
public struct SDPCandidate: Sendable, Hashable {
    /// One `cand-extension` pair (`generation 0`, `network-cost 999`, `ufrag Kx4e`, ...).
    public struct Extension: Sendable, Hashable {
        /// `extension-att-name`.
        public var name: String
        /// `extension-att-value`.
        public var value: String

        /// A pair with the given name and value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Candidates of the same type, base and server share one (1 to 32 ice-chars).
    public var foundation: String
    /// 1 for RTP, 2 for RTCP when it is not multiplexed.
    public var component: Int
    /// As written: "udp" or "UDP" (compare ignoring case), or an extension such as "tcp".
    public var transport: String
    /// The candidate's priority (RFC 8445 §5.1.2).
    public var priority: UInt32
    /// An IP literal (no brackets for IPv6) or, from some browsers, an mDNS name.
    public var address: String
    /// The transport port (9 for an active TCP candidate, RFC 6544).
    public var port: UInt16
    /// `host`, `srflx`, `prflx`, `relay` or an extension token.
    public var type: String
    /// `raddr`/`rport`: the base of a reflexive or relayed candidate.
    public var relatedAddress: String?
    /// `rport`.
    public var relatedPort: UInt16?
    /// The extension pairs after the type, in order.
    public var extensions: [Extension]

    /// A candidate with the given fields; a UDP host candidate by default.
    public init(
        foundation: String, component: Int = 1, transport: String = "udp", priority: UInt32,
        address: String, port: UInt16, type: String = "host", relatedAddress: String? = nil,
        relatedPort: UInt16? = nil, extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.extensions = extensions
    }

    /// Parses the value of an `a=candidate` attribute (without "candidate:").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPCandidate {
        let fields = value.split(separator: " ").map(String.init)
        guard fields.count >= 8 else {
            throw SDPError(
                line: line,
                reason:
                    "candidate needs <foundation> <component> <transport> <priority> <address> <port> typ <type>, found \(fields.count) fields"
            )
        }
        guard (1...32).contains(fields[0].utf8.count), fields[0].utf8.allSatisfy(isICEChar) else {
            throw SDPError(line: line, reason: "candidate foundation '\(fields[0])' is not 1 to 32 ice-chars")
        }
        guard fields[1].utf8.count <= 3, let component = sdpDecimal(fields[1]), (1...256).contains(component) else {
            throw SDPError(line: line, reason: "candidate component '\(fields[1])' is not a number 1-256")
        }
        guard let priority = sdpDecimal(fields[3]), priority <= UInt64(UInt32.max) else {
            throw SDPError(line: line, reason: "candidate priority '\(fields[3])' is not a 32-bit number")
        }
        guard let port = sdpPort(fields[5]) else {
            throw SDPError(line: line, reason: "candidate port '\(fields[5])' is not a number 0-65535")
        }
        guard fields[6] == "typ" else {
            throw SDPError(line: line, reason: "candidate has '\(fields[6])' where 'typ' must follow the port")
        }
        var candidate = SDPCandidate(
            foundation: fields[0], component: Int(component), transport: fields[2],
            priority: UInt32(priority), address: fields[4], port: port, type: fields[7])
        var rest = fields[8...]
        while let name = rest.first {
            guard rest.count >= 2 else {
                throw SDPError(line: line, reason: "candidate extension '\(name)' has no value")
            }
            let value = rest[rest.startIndex + 1]
            rest = rest.dropFirst(2)
            switch name {
            case "raddr" where candidate.relatedAddress == nil && candidate.extensions.isEmpty:
                candidate.relatedAddress = value
            case "rport" where candidate.relatedPort == nil && candidate.extensions.isEmpty:
                guard let port = sdpPort(value) else {
                    throw SDPError(line: line, reason: "candidate rport '\(value)' is not a number 0-65535")
                }
                candidate.relatedPort = port
            default:
                candidate.extensions.append(Extension(name: name, value: value))
            }
        }
        return candidate
    }

    /// The value of the `a=candidate` attribute (without "candidate:").
    public func serialize() -> String {
        var text = "\(foundation) \(component) \(transport) \(priority) \(address) \(port) typ \(type)"
        if let relatedAddress { text += " raddr \(relatedAddress)" }
        if let relatedPort { text += " rport \(relatedPort)" }
        for item in extensions { text += " \(item.name) \(item.value)" }
        return text
    }

    /// The `a=candidate:...` attribute.
    public var attribute: SDPAttribute { SDPAttribute(name: "candidate", value: serialize()) }

    /// ice-char = ALPHA / DIGIT / "+" / "/" (RFC 8839 §5.1).
    private static func isICEChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}
