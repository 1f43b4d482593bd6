/// Digest credentials: the value of an `Authorization` or `Proxy-Authorization` header
/// (RFC 3261 §22.4 and §25.1, RFC 7616 §3.4).
///
/// ```
/// credentials     = ("Digest" LWS digest-response) / other-response
/// digest-response = dig-resp *(COMMA dig-resp)
/// dig-resp        = username / realm / nonce / digest-uri / dresponse / algorithm /
///                   cnonce / opaque / message-qop / nonce-count / auth-param
/// digest-uri      = "uri" EQUAL LDQUOT digest-uri-value RDQUOT
/// dresponse       = "response" EQUAL LDQUOT 32LHEX RDQUOT     ; 64LHEX for SHA-256
/// message-qop     = "qop" EQUAL qop-value
/// cnonce          = "cnonce" EQUAL quoted-string
/// nonce-count     = "nc" EQUAL 8LHEX
/// ```
///
/// Logging: `description` (and so string interpolation) and `redacted` give only the
/// username, realm and algorithm. Never log `serialize()`, the `response`, or a whole
/// `Authorization` header, and never log a password.
public struct DigestAuthorization: Sendable, Equatable {
    /// The user name in the realm.
    public var username: String
    /// The realm from the challenge.
    public var realm: String
    /// The server nonce from the challenge.
    public var nonce: String
    /// The digest-uri: the Request-URI of the request, copied because proxies may rewrite it.
    public var uri: String
    /// The request digest, lowercase hex.
    public var response: String
    /// The algorithm used; `MD5` when the header has no `algorithm`.
    public var algorithm: DigestAlgorithm
    /// The client nonce; present with `qop` and with the `-sess` algorithms.
    public var cnonce: String?
    /// The challenge's `opaque`, echoed unchanged.
    public var opaque: String?
    /// The protection applied; nil for an RFC 2069 response.
    public var qop: DigestQop?
    /// The nonce count: how many requests this client has sent with this nonce, from 1.
    public var nc: UInt32?

    /// Creates credentials from their parts.
    public init(
        username: String, realm: String, nonce: String, uri: String, response: String,
        algorithm: DigestAlgorithm = .md5, cnonce: String? = nil, opaque: String? = nil,
        qop: DigestQop? = nil, nc: UInt32? = nil
    ) {
        self.username = username
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.response = response
        self.algorithm = algorithm
        self.cnonce = cnonce
        self.opaque = opaque
        self.qop = qop
        self.nc = nc
    }

    /// Parses an `Authorization` / `Proxy-Authorization` header value.
    ///
    /// Lenient where peers differ harmlessly: `qop` may be quoted, `nc` may be 1-8 hex digits
    /// of either case; unknown parameters are ignored.
    ///
    /// - Throws: `.notDigestScheme`, `.missingParameter` (`username`, `realm`, `nonce`, `uri`,
    ///   `response`; `cnonce`/`nc` when `qop` is present), `.unsupportedAlgorithm`,
    ///   `.unsupportedQop`, `.malformed` (e.g. a non-hex `nc`), `.duplicateParameter`.
    public static func parse(_ headerValue: String) throws(DigestError) -> DigestAuthorization {
        let list = try DigestParameterList.parse(headerValue)
        var result = DigestAuthorization(
            username: try list.required("username"), realm: try list.required("realm"),
            nonce: try list.required("nonce"), uri: try list.required("uri"),
            response: try list.required("response"), cnonce: try list.value("cnonce"),
            opaque: try list.value("opaque"))

        if let token = try list.value("algorithm") {
            guard let algorithm = DigestAlgorithm(token: token) else {
                throw DigestError(.unsupportedAlgorithm, token)
            }
            result.algorithm = algorithm
        }
        if let token = try list.value("qop") {
            guard let qop = DigestQop(token: token.trimmingDigestWhitespace()) else {
                throw DigestError(.unsupportedQop, token)
            }
            result.qop = qop
        }
        if let text = try list.value("nc") {
            guard (1...8).contains(text.utf8.count), text.utf8.allSatisfy(\.isDigestHexDigit),
                let count = UInt32(text, radix: 16)
            else {
                throw DigestError(.malformed, "nc is not 8 hex digits")
            }
            result.nc = count
        }
        if result.qop != nil {
            if result.cnonce == nil { throw DigestError(.missingParameter, "cnonce") }
            if result.nc == nil { throw DigestError(.missingParameter, "nc") }
        }
        return result
    }

    /// The header value. `algorithm` is always written; `nc` as 8 lowercase hex digits and
    /// `qop` unquoted (RFC 7616 §3.4).
    public func serialize() -> String {
        var writer = DigestParameterWriter()
        writer.quoted("username", username)
        writer.quoted("realm", realm)
        writer.quoted("nonce", nonce)
        writer.quoted("uri", uri)
        writer.quoted("response", response)
        writer.token("algorithm", algorithm.rawValue)
        if let cnonce { writer.quoted("cnonce", cnonce) }
        if let opaque { writer.quoted("opaque", opaque) }
        if let qop { writer.token("qop", qop.rawValue) }
        if let nc { writer.token("nc", Self.formatNonceCount(nc)) }
        return writer.headerValue
    }

    /// A log-safe summary: `Digest username="alice", realm="example.com", algorithm=SHA-256`.
    /// It never contains the response, the nonces or the password.
    public var redacted: String {
        var writer = DigestParameterWriter()
        writer.quoted("username", username)
        writer.quoted("realm", realm)
        writer.token("algorithm", algorithm.rawValue)
        return writer.headerValue
    }

    /// `nc` as 8 lowercase hex digits, e.g. `00000001`.
    static func formatNonceCount(_ count: UInt32) -> String {
        let digits = String(count, radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

extension DigestAuthorization: CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Same as `redacted`, so interpolating credentials into a log line is safe.
    public var description: String { redacted }
    /// Same as `redacted`.
    public var debugDescription: String { redacted }
    /// Shows only the redacted form to `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": redacted]) }
}

extension UInt8 {
    /// Whether this byte is an ASCII hex digit of either case.
    var isDigestHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
