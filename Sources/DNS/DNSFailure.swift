/// Why a lookup has no records. Each case says whether it is the name's own answer (it
/// does not exist, it has nothing of this type) or a failure to get an answer at all, so a
/// caller can decide to try something else or give up.
public enum DNSFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// NXDOMAIN: the name does not exist.
    case noSuchName
    /// The name exists but has no record of this type (NOERROR with an empty answer).
    case noData
    /// The server failed (SERVFAIL) or refused (REFUSED, NOTIMP, FORMERR) the question.
    case serverFailure(String)
    /// No answer within the timeout and tries.
    case timeout
    /// No server could be reached (connection refused, no server configured).
    case unreachable
    /// The name cannot be put in a query (empty label, too long).
    case badName
    /// The answer could not be read.
    case malformedAnswer
    /// The resolver could not start or was shut down.
    case resolverUnavailable(String)

    /// True when the server answered for the name: it does not exist or has no such record.
    public var isAuthoritativeNegative: Bool { self == .noSuchName || self == .noData }

    /// True when no answer came at all (a later attempt might get one).
    public var isNoAnswer: Bool {
        switch self {
        case .timeout, .unreachable, .resolverUnavailable: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .noSuchName: "no such domain (NXDOMAIN)"
        case .noData: "no record of that type"
        case .serverFailure(let what): "the DNS server failed (\(what))"
        case .timeout: "no answer from the DNS server (timeout)"
        case .unreachable: "no DNS server reachable"
        case .badName: "not a valid domain name"
        case .malformedAnswer: "an answer that could not be read"
        case .resolverUnavailable(let why): "the resolver is unavailable (\(why))"
        }
    }
}
