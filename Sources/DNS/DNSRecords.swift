// The DNS wire values the resolver hands out: record types, questions, SRV and NAPTR data, answers.

/// The record types the resolver asks for (RFC 1035 §3.2.2, RFC 3596, RFC 2782, RFC 3403).
public enum DNSRecordType: UInt16, Sendable, Hashable, CustomStringConvertible {
    case a = 1
    case cname = 5
    case aaaa = 28
    case srv = 33
    case naptr = 35

    public var description: String {
        switch self {
        case .a: "A"
        case .cname: "CNAME"
        case .aaaa: "AAAA"
        case .srv: "SRV"
        case .naptr: "NAPTR"
        }
    }
}

/// One question: a name (compared without case and without a trailing dot) and a type.
public struct DNSQuestion: Hashable, Sendable, CustomStringConvertible {
    /// The name in lower case, without a trailing dot.
    public let name: String
    public let type: DNSRecordType

    public init(_ name: String, _ type: DNSRecordType) {
        var n = name.lowercased()
        if n.hasSuffix(".") { n.removeLast() }
        self.name = n
        self.type = type
    }

    public var description: String { "\(type) \(name)" }
}

/// An SRV record's data (RFC 2782).
public struct SRVRecord: Hashable, Sendable {
    public var priority: UInt16
    public var weight: UInt16
    public var port: UInt16
    /// The target host, without a trailing dot; "." (the service is decidedly not offered) is "".
    public var target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }
}

/// A NAPTR record's data (RFC 3403 §4.1).
public struct NAPTRRecord: Hashable, Sendable {
    public var order: UInt16
    public var preference: UInt16
    public var flags: String
    public var service: String
    public var regexp: String
    /// The replacement name, without a trailing dot ("" for ".").
    public var replacement: String

    public init(
        order: UInt16, preference: UInt16, flags: String, service: String, regexp: String = "", replacement: String
    ) {
        self.order = order
        self.preference = preference
        self.flags = flags
        self.service = service
        self.regexp = regexp
        self.replacement = replacement
    }
}

/// A record of an answer, of the type asked for.
public enum DNSRecordData: Hashable, Sendable {
    /// An IPv4 address, as text.
    case a(String)
    /// An IPv6 address, as text.
    case aaaa(String)
    case srv(SRVRecord)
    case naptr(NAPTRRecord)
}

/// The records that answer one question, with the time they may be kept.
public struct DNSRecords: Hashable, Sendable {
    public var records: [DNSRecordData]
    /// The smallest TTL of the answer's records (CNAMEs on the way included), seconds.
    public var ttl: UInt32

    public init(_ records: [DNSRecordData], ttl: UInt32) {
        self.records = records
        self.ttl = ttl
    }

    /// The addresses among the records (A and AAAA), as text.
    public var addresses: [String] {
        records.compactMap {
            switch $0 {
            case .a(let s), .aaaa(let s): s
            default: nil
            }
        }
    }

    public var srv: [SRVRecord] { records.compactMap { if case .srv(let r) = $0 { r } else { nil } } }
    public var naptr: [NAPTRRecord] { records.compactMap { if case .naptr(let r) = $0 { r } else { nil } } }
}

/// What a lookup gives: records, or why there are none. Failures are values: a cache keeps
/// them like answers.
public typealias DNSAnswer = Result<DNSRecords, DNSFailure>
