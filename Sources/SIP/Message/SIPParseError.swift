/// Why a message or header could not be parsed, classified by what RFC 3261 says to do:
/// a request is answered with `status` (400, or 505 for an unknown version) when enough of
/// it is readable to build a response; a bad response is dropped.
public struct SIPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status a UAS answers a malformed request with.
    public var status: Int
    public var reason: String
    /// The header the problem was found in, if any.
    public var header: String?
    /// What could be read of the message (start line and header fields), so a UAS can copy
    /// Via, From, To, Call-ID and CSeq into its error response.
    public var partial: SIPMessage?

    public init(_ status: Int, _ reason: String, header: String? = nil) {
        self.status = status
        self.reason = reason
        self.header = header
    }

    public var description: String {
        if let header { return "\(header): \(reason)" }
        return reason
    }

    func inHeader(_ name: String) -> SIPParseError {
        var copy = self
        if copy.header == nil { copy.header = name }
        return copy
    }
}
