/// Page tokens: the dialer page's bearer (`POST /v1/page-tokens`, docs/api.md "Page tokens").
///
/// The same format, secret and HMAC as a room token (RoomToken.swift), under labels of their
/// own, so a room token never passes for a page token, nor the reverse. The page never holds
/// the API key; its token admits it to its own routing id's sessions until it expires, within
/// the scope it carries (`PageScope`). Nothing is stored: the scope is in the signed subject.
///
/// A scoped token (label `"irisgw scoped page token"`) signs this subject:
///
/// ```
/// subject  = routing-id LF [ profile *( "," profile ) ] LF [ flag *( "," flag ) ]
/// flag     = "capture" / "headers"
/// ```
///
/// Routing ids (`[A-Za-z0-9._:@-]`) and profile names (`[A-Za-z0-9_-]`) hold neither LF nor
/// ",", so each subject reads one way only. A token minted before scopes existed (label
/// `"irisgw page token"`, the subject only the routing id) still verifies, with the narrowest
/// scope: the default profile, no capture, no headers.
extension RoomTokenSigner {
    /// The longest life a page token may be given: one day.
    public static let maxPageTokenLifetime = 86_400
    /// Routing ids a page token may carry: 1-128 of `[A-Za-z0-9._:@-]`.
    public static func isValidRoutingId(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    /// A page token for `scope`, valid strictly before `expiresAt` (Unix seconds, rounded
    /// down). The scope's routing id and profile names must be valid (`PageScope.subject`).
    public func issuePageToken(_ scope: PageScope, expiresAt: Double) -> String {
        sign(subject: scope.subject, expiresAt: expiresAt, purpose: .scopedPage)
    }

    /// A page token for `routingId` with the narrowest scope (the default profile only).
    public func issuePageToken(routingId: String, expiresAt: Double) -> String {
        issuePageToken(PageScope(routingId: routingId), expiresAt: expiresAt)
    }

    /// The scope and expiry (Unix seconds) of a page token valid at `now`. Throws
    /// `.malformed`, `.badSignature` (altered, another secret, or a room token), or `.expired`.
    public func verifyPageScope(
        _ token: String, now: Double
    ) throws(RoomTokenError) -> (scope: PageScope, expiresAt: Double) {
        let scope: PageScope, expires: UInt64
        do throws(RoomTokenError) {
            let (subject, e) = try open(token, purpose: .scopedPage)
            guard let read = PageScope(subject: subject) else { throw .malformed }
            (scope, expires) = (read, e)
        } catch .badSignature {
            // Minted before scopes: the subject is the routing id alone.
            let (subject, e) = try open(token, purpose: .page)
            guard let routingId = String(validating: subject, as: UTF8.self), Self.isValidRoutingId(routingId) else {
                throw .malformed
            }
            (scope, expires) = (PageScope(routingId: routingId), e)
        }
        guard now < Double(expires) else { throw .expired }
        return (scope, Double(expires))
    }

    /// The routing id of a page token valid at `now` (`verifyPageScope`).
    public func verifyPageToken(_ token: String, now: Double) throws(RoomTokenError) -> String {
        try verifyPageScope(token, now: now).scope.routingId
    }
}

/// What a page token admits to: its routing id, the trunk profiles its creates may use, and
/// whether it may ask for a capture or set SIP header fields (docs/api.md "Page tokens").
public struct PageScope: Sendable, Equatable {
    public var routingId: String
    /// Profiles a create may name; the first is used when it names none. Empty: the gateway's
    /// default profile only.
    public var profiles: [String]
    /// `capture: true` on create and join.
    public var allowCapture: Bool
    /// `headers`, `callerName` and `privacy` on create (what becomes SIP header fields).
    public var allowHeaders: Bool

    public init(routingId: String, profiles: [String] = [], allowCapture: Bool = false, allowHeaders: Bool = false) {
        self.routingId = routingId
        self.profiles = profiles
        self.allowCapture = allowCapture
        self.allowHeaders = allowHeaders
    }

    /// Whether the scope's names fit in a token (`RoomTokenSigner` reads at most 1024
    /// characters): the subject at most 600 bytes.
    public var fitsInAToken: Bool { subject.utf8.count <= 600 }

    /// The signed subject (grammar in PageToken.swift's header).
    var subject: String {
        precondition(
            RoomTokenSigner.isValidRoutingId(routingId) && profiles.allSatisfy(TrunkProfile.isValidName),
            "a page scope's names must be valid")
        let flags = (allowCapture ? ["capture"] : []) + (allowHeaders ? ["headers"] : [])
        return routingId + "\n" + profiles.joined(separator: ",") + "\n" + flags.joined(separator: ",")
    }

    /// Reads a signed subject; nil for anything the grammar does not allow.
    init?(subject bytes: ArraySlice<UInt8>) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 3, RoomTokenSigner.isValidRoutingId(fields[0]) else { return nil }
        let profiles =
            fields[1].isEmpty ? [] : fields[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let flags =
            fields[2].isEmpty ? [] : fields[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard profiles.allSatisfy(TrunkProfile.isValidName), Set(flags).count == flags.count,
            flags.allSatisfy({ ["capture", "headers"].contains($0) })
        else { return nil }
        self.init(
            routingId: fields[0], profiles: profiles, allowCapture: flags.contains("capture"),
            allowHeaders: flags.contains("headers"))
    }
}
