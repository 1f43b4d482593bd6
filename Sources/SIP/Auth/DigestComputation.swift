// SIP digest authentication (RFC 3261 §22, RFC 2617, RFC 7616, RFC 8760).
//
// Wire values: `DigestChallenge` (WWW-/Proxy-Authenticate) and `DigestAuthorization`
// (Authorization / Proxy-Authorization). Machines: `DigestClient` answers challenges,
// `DigestServer` issues and checks them. Hashing goes through `Crypto`.
//
// Nothing here logs. For logs use `DigestAuthorization.redacted` (username, realm, algorithm);
// a password or a full Authorization header is never to be logged.

/// The request-digest arithmetic of RFC 7616 §3.4.1-3.4.3 (RFC 2617 §3.2.2 for MD5).
///
/// ```
/// A1       = username ":" realm ":" passwd                       ; MD5, SHA-256
/// A1       = H(username ":" realm ":" passwd) ":" nonce ":" cnonce ; the -sess variants
/// A2       = Method ":" request-uri                              ; qop absent or auth
/// A2       = Method ":" request-uri ":" H(entity-body)           ; qop auth-int
/// response = KD(H(A1), nonce ":" nc ":" cnonce ":" qop ":" H(A2))  ; with qop
/// response = KD(H(A1), nonce ":" H(A2))                          ; RFC 2069, no qop
/// KD(secret, data) = H(secret ":" data)
/// ```
enum DigestComputation {
    /// The lowercase hex request-digest. `cnonce` is used by the `-sess` A1 and with `qop`;
    /// `nc` only with `qop`.
    static func response(
        algorithm: DigestAlgorithm, username: String, realm: String, password: String,
        nonce: String, cnonce: String?, nc: UInt32?, qop: DigestQop?,
        method: String, uri: String, body: [UInt8]
    ) -> String {
        var ha1 = algorithm.hexHash("\(username):\(realm):\(password)")
        if algorithm.isSession {
            ha1 = algorithm.hexHash("\(ha1):\(nonce):\(cnonce ?? "")")
        }

        let a2: String
        if qop == .authInt {
            a2 = "\(method):\(uri):\(algorithm.hexHash(body))"
        } else {
            a2 = "\(method):\(uri)"
        }
        let ha2 = algorithm.hexHash(a2)

        guard let qop else {
            return algorithm.hexHash("\(ha1):\(nonce):\(ha2)")
        }
        let count = DigestAuthorization.formatNonceCount(nc ?? 0)
        return algorithm.hexHash(
            "\(ha1):\(nonce):\(count):\(cnonce ?? ""):\(qop.rawValue):\(ha2)")
    }
}
