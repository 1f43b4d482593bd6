/// A digest challenge: the value of a `WWW-Authenticate` or `Proxy-Authenticate` header
/// (RFC 3261 §22.4 and §25.1, RFC 7616 §3.3, RFC 8760).
///
/// ```
/// challenge   = ("Digest" LWS digest-cln *(COMMA digest-cln)) / other-challenge
/// digest-cln  = realm / domain / nonce / opaque / stale / algorithm / qop-options / auth-param
/// realm       = "realm" EQUAL quoted-string
/// domain      = "domain" EQUAL LDQUOT URI *( 1*SP URI ) RDQUOT
/// nonce       = "nonce" EQUAL quoted-string
/// opaque      = "opaque" EQUAL quoted-string
/// stale       = "stale" EQUAL ( "true" / "false" )
/// algorithm   = "algorithm" EQUAL ( "MD5" / "MD5-sess" / "SHA-256" / "SHA-256-sess" / token )
/// qop-options = "qop" EQUAL LDQUOT qop-value *("," qop-value) RDQUOT
/// ```
public struct DigestChallenge: Sendable, Equatable {
    /// The protection space; shown to users and part of A1.
    public var realm: String
    /// The server's nonce, echoed back in the credentials.
    public var nonce: String
    /// Server data the client must echo unchanged; nil when absent.
    public var opaque: String?
    /// The algorithm to answer with; `MD5` when the header has no `algorithm` (RFC 3261).
    public var algorithm: DigestAlgorithm
    /// The supported protections the server offers, in its order; empty for an RFC 2069
    /// challenge without `qop`. Unknown tokens are dropped.
    public var qopOptions: [DigestQop]
    /// True when the previous request failed only because its nonce had expired: retry with
    /// the new nonce without asking the user again.
    public var stale: Bool
    /// The URIs of the protection space (`domain`), empty when absent.
    public var domain: [String]

    /// Creates a challenge. Defaults: `MD5`, no `qop`, not stale, no opaque, no domain.
    public init(
        realm: String, nonce: String, opaque: String? = nil, algorithm: DigestAlgorithm = .md5,
        qopOptions: [DigestQop] = [], stale: Bool = false, domain: [String] = []
    ) {
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque
        self.algorithm = algorithm
        self.qopOptions = qopOptions
        self.stale = stale
        self.domain = domain
    }

    /// Parses a `WWW-Authenticate` / `Proxy-Authenticate` header value, e.g.
    /// `Digest realm="x", nonce="y", qop="auth,auth-int", algorithm=SHA-256, stale=TRUE`.
    ///
    /// Parameter names are case-insensitive, whitespace may surround `=` and `,`, quoted
    /// strings may hold commas and `\"`; unknown parameters are ignored.
    ///
    /// - Throws: `.notDigestScheme` for another scheme (e.g. `Basic`), `.missingParameter` when
    ///   `realm` is absent (a missing `nonce` reads as empty), `.unsupportedAlgorithm` for an algorithm not in
    ///   `DigestAlgorithm`, `.unsupportedQop` when `qop` lists only unknown protections,
    ///   `.malformed` / `.duplicateParameter` for grammar errors.
    public static func parse(_ headerValue: String) throws(DigestError) -> DigestChallenge {
        let list = try DigestParameterList.parse(headerValue)
        let realm = try list.required("realm")
        // RFC 2617 requires a nonce, but some registrars (and pjproject's uas-auth scenario)
        // omit it; answering with an empty nonce is what those servers expect.
        let nonce = try list.value("nonce") ?? ""

        var algorithm = DigestAlgorithm.md5
        if let token = try list.value("algorithm") {
            guard let parsed = DigestAlgorithm(token: token) else {
                throw DigestError(.unsupportedAlgorithm, token)
            }
            algorithm = parsed
        }

        var qopOptions: [DigestQop] = []
        if let text = try list.value("qop") {
            for item in text.split(separator: ",") {
                let token = item.trimmingDigestWhitespace()
                if let qop = DigestQop(token: token), !qopOptions.contains(qop) {
                    qopOptions.append(qop)
                }
            }
            // An offer of only unknown protections must not be answered as if qop were absent.
            if qopOptions.isEmpty { throw DigestError(.unsupportedQop, text) }
        }

        let stale = try list.value("stale")?.lowercased() == "true"
        let domain =
            try list.value("domain")
            .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) } ?? []

        return DigestChallenge(
            realm: realm, nonce: nonce, opaque: try list.value("opaque"), algorithm: algorithm,
            qopOptions: qopOptions, stale: stale, domain: domain)
    }

    /// Parses every header value of a 401/407 response and keeps the ones that can be
    /// answered, in order; other schemes, unknown algorithms and malformed values are skipped.
    ///
    /// - Throws: the first value's error when none can be used (`.noUsableChallenge` when
    ///   there were no values at all).
    public static func parseAll(_ headerValues: [String]) throws(DigestError) -> [DigestChallenge] {
        var usable: [DigestChallenge] = []
        var firstError: DigestError?
        for value in headerValues {
            do throws(DigestError) {
                usable.append(try parse(value))
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if usable.isEmpty {
            throw firstError ?? DigestError(.noUsableChallenge, "no challenge headers")
        }
        return usable
    }

    /// The header value: `Digest realm="...", nonce="...", ...`. `algorithm` is always
    /// written; `qop`, `opaque`, `domain` and `stale=TRUE` only when set.
    public func serialize() -> String {
        var writer = DigestParameterWriter()
        writer.quoted("realm", realm)
        if !domain.isEmpty { writer.quoted("domain", domain.joined(separator: " ")) }
        writer.quoted("nonce", nonce)
        if let opaque { writer.quoted("opaque", opaque) }
        if stale { writer.token("stale", "TRUE") }
        writer.token("algorithm", algorithm.rawValue)
        if !qopOptions.isEmpty {
            writer.quoted("qop", qopOptions.map(\.rawValue).joined(separator: ","))
        }
        return writer.headerValue
    }
}

extension StringProtocol {
    /// Drops leading and trailing SP / HTAB / CR / LF (no Foundation needed).
    func trimmingDigestWhitespace() -> String {
        let isSpace: (Character) -> Bool = {
            $0 == " " || $0 == "\t" || $0 == "\r\n" || $0 == "\r" || $0 == "\n"
        }
        guard let first = firstIndex(where: { !isSpace($0) }),
            let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
