/// What a carrier's INVITE said about an inbound call beyond the two numbers: its own
/// headers, the asserted identity, where the call was diverted from, and whether the caller
/// id was signed (STIR/SHAKEN). Carried by `onNotification` (notify) and the inbound
/// session's snapshot. Header values are as received, unchanged; absent parts are left out,
/// and so are values past the gateway's limits (`truncated` says which fields lost some).
public struct CarrierCallInfo: Codable, Sendable, Equatable {
    /// The INVITE's `X-` headers, name as the carrier spelt it to value (a name sent twice:
    /// its values joined with ", ").
    public var headers: [String: String]?
    /// P-Asserted-Identity values (RFC 3325), one per identity (a sip: and a tel: one).
    public var pAssertedIdentity: [String]?
    /// Diversion values (RFC 5806), most recent redirection first.
    public var diversion: [String]?
    /// History-Info entries (RFC 7044), in the order received.
    public var historyInfo: [String]?
    /// True when the INVITE carried an Identity header (RFC 8224): the caller id was signed.
    public var identity: Bool
    /// The Identity header values (the PASSporT and its parameters), as received.
    public var identityHeaders: [String]?
    /// The verification status of the caller's number (`verstat` on the From or
    /// P-Asserted-Identity user part, RFC 8224 §6.2.3 / ATIS-1000074):
    /// `TN-Validation-Passed`, `TN-Validation-Failed`, `No-TN-Validation`; nil when absent.
    public var verstat: String?
    /// The fields from which the gateway left values out to stay within its limits (too
    /// long, too many, or past the total; docs/events.md): any of `headers`,
    /// `pAssertedIdentity`, `diversion`, `historyInfo`, `identityHeaders`, `verstat`. A value
    /// is kept whole or left out, never cut. nil when nothing was left out.
    public var truncated: [String]?

    public init(
        headers: [String: String]? = nil, pAssertedIdentity: [String]? = nil, diversion: [String]? = nil,
        historyInfo: [String]? = nil, identity: Bool = false, identityHeaders: [String]? = nil, verstat: String? = nil,
        truncated: [String]? = nil
    ) {
        self.truncated = truncated
        self.headers = headers
        self.pAssertedIdentity = pAssertedIdentity
        self.diversion = diversion
        self.historyInfo = historyInfo
        self.identity = identity
        self.identityHeaders = identityHeaders
        self.verstat = verstat
    }
}
