import Crypto
import SIP

/// Signs and checks the tokens that admit a client to an inbound session's room.
///
/// A token is URL-safe base64 (RFC 4648 §5, no padding) of:
///
/// ```
/// token   = version expires length room mac
/// version = %x01                   ; 1 byte
/// expires = 8 bytes                ; Unix seconds, big-endian, rounded down
/// length  = 2 bytes                ; byte count of room, big-endian
/// room    = *OCTET                 ; the room id, UTF-8
/// mac     = 32 bytes               ; HMAC-SHA-256(secret, label version expires length room)
/// label   = "irisgw room token"    ; so no other MAC under the same secret can pass for one
///                                  ; (page tokens: "irisgw scoped page token", PageToken.swift)
/// ```
///
/// The fields have fixed sizes or a length prefix, so no two (room, expiry) pairs sign the
/// same bytes. The token is valid strictly before `expires`.
public struct RoomTokenSigner: Sendable {
    private static let version: UInt8 = 1
    private static let macLength = 32
    private static let headerLength = 1 + 8 + 2
    /// Far longer than any real token; refuses oversized input before decoding it.
    private static let maxTokenLength = 1024

    private let secret: [UInt8]

    /// A signer with `secret` (32 random bytes; `loadOrCreate` keeps one on disk).
    public init(secret: [UInt8]) {
        precondition(!secret.isEmpty, "a room token secret cannot be empty")
        self.secret = secret
    }

    /// A token for `roomId` that `verify` accepts until `expiresAt` (Unix seconds, rounded
    /// down to a whole second).
    public func issue(roomId: String, expiresAt: Double) -> String {
        sign(subject: roomId, expiresAt: expiresAt, purpose: .room)
    }

    /// Checks `token` for `roomId` at `now` (Unix seconds): the signature first (in
    /// constant time), then the room, then the expiry.
    public func verify(_ token: String, roomId: String, now: Double) throws(RoomTokenError) {
        let (subject, expires) = try open(token, purpose: .room)
        guard subject.elementsEqual(roomId.utf8) else { throw .foreignRoom }
        guard now < Double(expires) else { throw .expired }
    }

    /// What a token admits to. Each purpose has its own MAC label, so a token of one purpose
    /// never verifies as another (a room token is no page token, and the reverse).
    enum Purpose {
        /// An inbound session's room (subject: the room id).
        case room
        /// The dialer page's bearer as first minted (subject: a routing id; PageToken.swift).
        case page
        /// The dialer page's bearer with its scope (subject: `PageScope.subject`).
        case scopedPage

        var label: [UInt8] {
            switch self {
            case .room: Array("irisgw room token".utf8)
            case .page: Array("irisgw page token".utf8)
            case .scopedPage: Array("irisgw scoped page token".utf8)
            }
        }
    }

    /// The one token format: `version expires length subject mac` under `purpose`'s label.
    func sign(subject: String, expiresAt: Double, purpose: Purpose) -> String {
        let bytes = Array(subject.utf8)
        precondition(bytes.count <= Int(UInt16.max), "subject too long for a token")
        var body: [UInt8] = [Self.version]
        body += bigEndianBytes(Self.seconds(expiresAt), count: 8)
        body += bigEndianBytes(UInt64(bytes.count), count: 2)
        body += bytes
        return TokenText.encode(body + mac(body, purpose: purpose))
    }

    /// The subject's bytes and the expiry (Unix seconds) of a correctly signed `token`; the
    /// signature is checked in constant time before anything in the token is believed.
    func open(_ token: String, purpose: Purpose) throws(RoomTokenError) -> (subject: ArraySlice<UInt8>, expires: UInt64)
    {
        guard token.utf8.count <= Self.maxTokenLength, let bytes = TokenText.decode(token),
            bytes.count >= Self.headerLength + Self.macLength, bytes[0] == Self.version
        else {
            throw .malformed
        }
        let length = Int(bigEndianValue(bytes[9..<11]))
        guard bytes.count == Self.headerLength + length + Self.macLength else { throw .malformed }
        let body = Array(bytes[..<(Self.headerLength + length)])
        guard Crypto.constantTimeEqual(mac(body, purpose: purpose), Array(bytes[body.count...])) else {
            throw .badSignature
        }
        return (body[Self.headerLength...], bigEndianValue(bytes[1..<9]))
    }

    /// The key the nodes of a cluster sign forwarded control API requests with
    /// (`X-Irisgw-Forwarded`, docs/api.md "Clusters"): derived from the secret every node
    /// shares, under its own label, so it is no token key and the secret itself never leaves.
    public var nodeForwardingKey: [UInt8] {
        Crypto.hmacSHA256(key: secret, data: Array("irisgw node forwarding key".utf8))
    }

    private func mac(_ body: [UInt8], purpose: Purpose) -> [UInt8] {
        Crypto.hmacSHA256(key: secret, data: purpose.label + body)
    }

    /// Whole seconds, clamped to the 64-bit field (NaN and the past become 0: expired).
    private static func seconds(_ time: Double) -> UInt64 {
        guard time > 0 else { return 0 }
        guard time < 18_446_744_073_709_549_568.0 else { return .max }  // largest Double below 2^64
        return UInt64(time.rounded(.down))
    }
}

/// Why `RoomTokenSigner.verify` refused a token.
public enum RoomTokenError: Error, Equatable, Sendable {
    /// Not a token at all: empty, not URL-safe base64, truncated, unknown version.
    case malformed
    /// Correctly signed, but for another room.
    case foreignRoom
    /// The signature does not match: altered, or signed with another secret.
    case badSignature
    /// Correctly signed for this room, but its time has passed.
    case expired

    /// The iris protocol's error code: -105 for an expired token, -103 for any other refusal.
    public var irisCode: Int {
        switch self {
        case .expired: -105
        case .malformed, .foreignRoom, .badSignature: -103
        }
    }
}

private func bigEndianBytes(_ value: UInt64, count: Int) -> [UInt8] {
    (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

private func bigEndianValue(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
}

/// How a token's bytes are written: URL-safe base64 without padding (RFC 4648 §5, §3.2), and
/// read back only in its one canonical form (§3.5), so no two texts carry the same token.
enum TokenText {
    static func encode(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: .urlSafe, padded: false) }

    static func decode(_ text: String) -> [UInt8]? {
        Base64.decode(text, alphabet: .urlSafe, padding: .forbidden, canonical: true)
    }
}
