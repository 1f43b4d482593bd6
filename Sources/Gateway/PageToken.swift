/// Page tokens: the dialer page's bearer (`POST /v1/page-tokens`, docs/api.md "Page tokens").
///
/// The same format, secret and HMAC as a room token (RoomToken.swift), with the subject a
/// routing id and the label `"irisgw page token"`: a room token never passes for a page
/// token, nor the reverse. The page never holds the API key; its token admits it to its own
/// routing id's sessions until it expires.
extension RoomTokenSigner {
    /// The longest life a page token may be given: one day.
    public static let maxPageTokenLifetime = 86_400
    /// Routing ids a page token may carry: 1-128 of `[A-Za-z0-9._:@-]`.
    public static func isValidRoutingId(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { b in
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }

    /// A page token for `routingId`, valid strictly before `expiresAt` (Unix seconds,
    /// rounded down).
    public func issuePageToken(routingId: String, expiresAt: Double) -> String {
        sign(subject: routingId, expiresAt: expiresAt, purpose: .page)
    }

    /// The routing id of a page token valid at `now` (Unix seconds). Throws `.malformed`,
    /// `.badSignature` (altered, another secret, or a room token), or `.expired`.
    public func verifyPageToken(_ token: String, now: Double) throws(RoomTokenError) -> String {
        let (subject, expires) = try open(token, purpose: .page)
        guard let routingId = String(validating: subject, as: UTF8.self) else { throw .malformed }
        guard now < Double(expires) else { throw .expired }
        return routingId
    }
}
