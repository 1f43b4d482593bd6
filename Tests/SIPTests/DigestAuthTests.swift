import Crypto
import SIP
import Testing

// MARK: - Crypto

@Suite("Crypto")
struct CryptoWrapperTests {
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("The quick brown fox jumps over the lazy dog", "9e107d9d372bb6826bd81d3542a419d6")
    ])
    func md5(input: String, hex: String) {
        #expect(Crypto.hex(Crypto.md5(Array(input.utf8))) == hex)
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "The quick brown fox jumps over the lazy dog",
            "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
        )
    ])
    func sha256(input: String, hex: String) {
        #expect(Crypto.hex(Crypto.sha256(Array(input.utf8))) == hex)
    }

    /// RFC 4231 test cases 1 and 2, plus the empty key and message.
    @Test(arguments: [
        (
            [UInt8](repeating: 0x0b, count: 20), "Hi There",
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), "what do ya want for nothing?",
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        ([], "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    ])
    func hmacSHA256(key: [UInt8], data: String, hex: String) {
        #expect(Crypto.hex(Crypto.hmacSHA256(key: key, data: Array(data.utf8))) == hex)
    }

    @Test func hexIsLowercaseTwoDigitsPerByte() {
        #expect(Crypto.hex([0x00, 0x0f, 0xab, 0xff]) == "000fabff")
        #expect(Crypto.hex([]) == "")
    }

    @Test func constantTimeEqual() {
        #expect(Crypto.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Crypto.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Crypto.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(Crypto.constantTimeEqual([], []))
    }

    @Test func randomBytesHaveTheRequestedLengthAndDiffer() {
        let a = Crypto.randomBytes(count: 16)
        let b = Crypto.randomBytes(count: 16)
        #expect(a.count == 16)
        #expect(a != b)  // equal with probability 2^-128
        #expect(Crypto.randomBytes(count: 0).isEmpty)
    }
}

// MARK: - RFC examples

private let mufasaOld = DigestCredentials(username: "Mufasa", password: "Circle Of Life")
/// RFC 7616 spells the password with a lowercase "of"; its example responses match only so.
private let mufasa7616 = DigestCredentials(username: "Mufasa", password: "Circle of Life")

@Suite("Digest RFC examples")
struct DigestRFCExampleTests {
    @Test func rfc2617Section3_5() throws {
        let challenge = try DigestChallenge.parse(
            """
            Digest
                realm="testrealm@host.com",
                qop="auth,auth-int",
                nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093",
                opaque="5ccc069c403ebaf9f0171e9517f40e41"
            """)
        #expect(challenge.realm == "testrealm@host.com")
        #expect(challenge.qopOptions == [.auth, .authInt])
        #expect(challenge.algorithm == .md5)

        var client = DigestClient()
        let auth = try client.authorization(
            for: [challenge], method: "GET", uri: "/dir/index.html", credentials: mufasaOld,
            cnonce: "0a4f113b")
        #expect(auth.response == "6629fae49393a05397450978507c4ef1")
        #expect(auth.qop == .auth)
        #expect(auth.nc == 1)
        #expect(auth.cnonce == "0a4f113b")
        #expect(auth.opaque == "5ccc069c403ebaf9f0171e9517f40e41")

        let header = auth.serialize()
        #expect(header.contains("nc=00000001"))
        #expect(header.contains("qop=auth,") || header.hasSuffix("qop=auth"))
        #expect(header.contains("response=\"6629fae49393a05397450978507c4ef1\""))
        #expect(try DigestAuthorization.parse(header) == auth)
    }

    static let rfc7616Challenges = [
        """
        Digest
            realm="http-auth@example.org",
            qop="auth, auth-int",
            algorithm=SHA-256,
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
        """,
        """
        Digest
            realm="http-auth@example.org",
            qop="auth, auth-int",
            algorithm=MD5,
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
        """
    ]
    static let rfc7616Cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    @Test func rfc7616Section3_9_1SHA256() throws {
        // Both challenges, MD5 listed first: the client must still answer SHA-256.
        let challenges = try DigestChallenge.parseAll(Self.rfc7616Challenges.reversed())
        var client = DigestClient()
        let auth = try client.authorization(
            for: challenges, method: "GET", uri: "/dir/index.html", credentials: mufasa7616,
            cnonce: Self.rfc7616Cnonce)
        #expect(auth.algorithm == .sha256)
        #expect(
            auth.response
                == "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")
        #expect(auth.opaque == "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS")
    }

    @Test func rfc7616Section3_9_1MD5() throws {
        let challenge = try DigestChallenge.parse(Self.rfc7616Challenges[1])
        var client = DigestClient()
        let auth = try client.authorization(
            for: challenge, method: "GET", uri: "/dir/index.html", credentials: mufasa7616,
            cnonce: Self.rfc7616Cnonce)
        #expect(auth.response == "8ca523f5e9506fed4657c9700eebdbec")
    }

    @Test func rfc7616AuthorizationHeaderParses() throws {
        let auth = try DigestAuthorization.parse(
            """
            Digest username="Mufasa",
                realm="http-auth@example.org",
                uri="/dir/index.html",
                algorithm=SHA-256,
                nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
                nc=00000001,
                cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
                qop=auth,
                response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
                opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """)
        #expect(auth.username == "Mufasa")
        #expect(auth.algorithm == .sha256)
        #expect(auth.nc == 1)
        #expect(auth.qop == .auth)
        #expect(auth.cnonce == Self.rfc7616Cnonce)
    }
}

// MARK: - Challenge parsing

@Suite("DigestChallenge parsing")
struct DigestChallengeParseTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var header: String
        var realm: String
        var nonce: String
        var algorithm: DigestAlgorithm = .md5
        var qop: [DigestQop] = []
        var stale = false
        var opaque: String?
        var domain: [String] = []
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "RFC 3261 example",
            header:
                #"Digest realm="atlanta.com", domain="sip:boxesbybob.com", qop="auth", nonce="f84f1cec41e6cbe5aea9c8e88d359", opaque="", stale=FALSE, algorithm=MD5"#,
            realm: "atlanta.com", nonce: "f84f1cec41e6cbe5aea9c8e88d359", qop: [.auth],
            opaque: "", domain: ["sip:boxesbybob.com"]),
        Case(
            name: "comma inside quotes",
            header: #"Digest realm="a, b, c", nonce="n,1""#, realm: "a, b, c", nonce: "n,1"),
        Case(
            name: "escaped quotes and backslash",
            header: #"Digest realm="say \"hi\" \\ bye", nonce="x""#,
            realm: #"say "hi" \ bye"#, nonce: "x"),
        Case(
            name: "odd whitespace",
            header: "  Digest\trealm =  \"r\"  ,\r\n nonce\t=\"n\" ,qop = \" auth-int , auth \"  ",
            realm: "r", nonce: "n", qop: [.authInt, .auth]),
        Case(
            name: "mixed-case names and values",
            header: #"DIGEST Realm="r", NONCE="n", Algorithm=sha-256, QOP="AUTH", Stale=true"#,
            realm: "r", nonce: "n", algorithm: .sha256, qop: [.auth], stale: true),
        Case(
            name: "unknown params ignored, unknown qop token dropped",
            header: #"Digest charset=UTF-8, realm="r", userhash=false, nonce="n", qop="auth-conf,auth""#,
            realm: "r", nonce: "n", qop: [.auth]),
        Case(
            name: "empty list elements",
            header: #"Digest ,realm="r",, nonce="n",  algorithm=SHA-256-sess,"#,
            realm: "r", nonce: "n", algorithm: .sha256Sess),
        Case(
            name: "domain list",
            header: #"Digest realm="r", nonce="n", domain="sip:a.example  sip:b.example""#,
            realm: "r", nonce: "n", domain: ["sip:a.example", "sip:b.example"]),
        Case(
            name: "MD5-sess", header: #"Digest realm="r",nonce="n",algorithm=md5-SESS"#,
            realm: "r", nonce: "n", algorithm: .md5Sess)
    ]

    @Test(arguments: cases)
    func parses(_ c: Case) throws {
        let challenge = try DigestChallenge.parse(c.header)
        #expect(challenge.realm == c.realm)
        #expect(challenge.nonce == c.nonce)
        #expect(challenge.algorithm == c.algorithm)
        #expect(challenge.qopOptions == c.qop)
        #expect(challenge.stale == c.stale)
        #expect(challenge.opaque == c.opaque)
        #expect(challenge.domain == c.domain)
        // serialize() is parsed back to the same value.
        #expect(try DigestChallenge.parse(challenge.serialize()) == challenge)
    }

    static let failures: [(String, DigestError.Kind)] = [
        (#"Digest nonce="n""#, .missingParameter),
        (#"Basic realm="r""#, .notDigestScheme),
        ("", .malformed),
        ("Digest", .missingParameter),
        (#"Digest realm="r", nonce="n"#, .malformed),
        (#"Digest realm "r", nonce="n""#, .malformed),
        (#"Digest realm="r" nonce="n""#, .malformed),
        (#"Digest realm=, nonce="n""#, .malformed),
        (#"Digest realm="r", nonce="n", nonce="m""#, .duplicateParameter),
        (#"Digest realm="r", nonce="n", algorithm=SHA-512-256"#, .unsupportedAlgorithm),
        (#"Digest realm="r", nonce="n", qop="auth-conf""#, .unsupportedQop),
        (#"Digest realm="r\"#, .malformed),
        ("Digestrealm=\"r\"", .notDigestScheme)
    ]

    @Test(arguments: failures)
    func rejects(header: String, kind: DigestError.Kind) {
        #expect {
            _ = try DigestChallenge.parse(header)
        } throws: { error in
            (error as? DigestError)?.kind == kind
        }
    }

    @Test func basicSchemeErrorSaysSo() throws {
        let error = try #require(throws: DigestError.self) {
            _ = try DigestChallenge.parse(#"Basic realm="r""#)
        }
        #expect(error.description.contains("not a Digest scheme"))
        #expect(error.description.contains("Basic"))
    }

    @Test func missingNonceReadsAsEmpty() throws {
        // Lenient on purpose: registrars that omit the nonce expect an answer with an empty one.
        let challenge = try DigestChallenge.parse(#"Digest realm="r""#)
        #expect(challenge.nonce == "")
        #expect(challenge.realm == "r")
    }

    @Test func missingRealmErrorNamesIt() throws {
        let error = try #require(throws: DigestError.self) {
            _ = try DigestChallenge.parse(#"Digest nonce="n""#)
        }
        #expect(error == DigestError(.missingParameter, "realm"))
    }

    @Test func parseAllSkipsWhatCannotBeAnswered() throws {
        let all = try DigestChallenge.parseAll([
            #"Basic realm="r""#,
            #"Digest realm="r", nonce="a", algorithm=SHA-512-256"#,
            #"Digest realm="r", nonce="b", algorithm=MD5"#
        ])
        #expect(all.map(\.nonce) == ["b"])
        #expect(throws: DigestError(.notDigestScheme, "Basic")) {
            _ = try DigestChallenge.parseAll([#"Basic realm="r""#])
        }
        #expect(throws: DigestError.self) { _ = try DigestChallenge.parseAll([]) }
    }

    @Test func serializeQuotesAndEscapes() {
        let challenge = DigestChallenge(
            realm: #"a "b" \c"#, nonce: "n", opaque: "o", algorithm: .sha256,
            qopOptions: [.auth, .authInt], stale: true)
        let header = challenge.serialize()
        #expect(header.hasPrefix("Digest "))
        #expect(header.contains(#"realm="a \"b\" \\c""#))
        #expect(header.contains("algorithm=SHA-256"))
        #expect(header.contains(#"qop="auth,auth-int""#))
        #expect(header.contains("stale=TRUE"))
    }

    @Test func serializeDropsLineBreaks() {
        let header = DigestChallenge(realm: "a\r\nInjected: x", nonce: "n").serialize()
        #expect(!header.contains("\r") && !header.contains("\n"))
    }

    @Test(arguments: [
        ("md5", DigestAlgorithm.md5), ("MD5-SESS", .md5Sess), ("Sha-256", .sha256),
        ("sha-256-sess", .sha256Sess)
    ])
    func algorithmTokensAreCaseInsensitive(token: String, algorithm: DigestAlgorithm) {
        #expect(DigestAlgorithm(token: token) == algorithm)
    }

    @Test func unknownAlgorithmTokenIsNil() {
        #expect(DigestAlgorithm(token: "SHA-512-256") == nil)
    }
}

// MARK: - Authorization header

@Suite("DigestAuthorization")
struct DigestAuthorizationTests {
    @Test func serializeFormatsNcAndQopUnquoted() throws {
        let auth = DigestAuthorization(
            username: "bob", realm: "r", nonce: "n", uri: "sip:bob@example.com",
            response: "abc", algorithm: .sha256, cnonce: "c", opaque: "o", qop: .authInt,
            nc: 0x1a)
        let header = auth.serialize()
        #expect(header.contains("nc=0000001a"))
        #expect(header.contains("qop=auth-int"))
        #expect(!header.contains("qop=\""))
        #expect(header.contains(#"uri="sip:bob@example.com""#))
        #expect(try DigestAuthorization.parse(header) == auth)
    }

    @Test func rfc2069FormHasNoQop() throws {
        let auth = try DigestAuthorization.parse(
            #"Digest username="u", realm="r", nonce="n", uri="sip:x", response="ff""#)
        #expect(auth.qop == nil && auth.nc == nil && auth.cnonce == nil)
        #expect(auth.algorithm == .md5)
    }

    @Test(arguments: [
        (#"Digest realm="r", nonce="n", uri="u", response="x""#, DigestError.Kind.missingParameter),
        (#"Digest username="u", realm="r", nonce="n", uri="u""#, .missingParameter),
        (
            #"Digest username="u", realm="r", nonce="n", uri="u", response="x", qop=auth, nc=00000001"#,
            .missingParameter
        ),
        (
            #"Digest username="u", realm="r", nonce="n", uri="u", response="x", qop=auth, cnonce="c", nc=0000000g"#,
            .malformed
        ),
        (
            #"Digest username="u", realm="r", nonce="n", uri="u", response="x", qop=auth, cnonce="c", nc=123456789"#,
            .malformed
        ),
        (
            #"Digest username="u", realm="r", nonce="n", uri="u", response="x", qop=auth-conf"#,
            .unsupportedQop
        ),
        (#"Basic dXNlcjpwYXNz"#, .notDigestScheme)
    ])
    func rejects(header: String, kind: DigestError.Kind) {
        #expect {
            _ = try DigestAuthorization.parse(header)
        } throws: { error in
            (error as? DigestError)?.kind == kind
        }
    }

    @Test func redactedShowsNoSecrets() {
        let auth = DigestAuthorization(
            username: "alice", realm: "example.com", nonce: "THE-NONCE", uri: "sip:x",
            response: "0123456789abcdef", algorithm: .sha256, cnonce: "THE-CNONCE", qop: .auth,
            nc: 1)
        for text in [auth.redacted, auth.description, String(reflecting: auth), "\(auth)"] {
            #expect(text.contains("alice"))
            #expect(text.contains("example.com"))
            #expect(text.contains("SHA-256"))
            #expect(!text.contains("0123456789abcdef"))
            #expect(!text.contains("THE-NONCE"))
            #expect(!text.contains("THE-CNONCE"))
        }
        var dumped = ""
        dump(auth, to: &dumped)
        #expect(!dumped.contains("0123456789abcdef"))
    }

    @Test func credentialsNeverShowThePassword() {
        let credentials = DigestCredentials(username: "alice", password: "s3cret-Pa55")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [
            credentials.description, credentials.debugDescription, "\(credentials)",
            String(reflecting: credentials), dumped
        ] {
            #expect(text.contains("alice"))
            #expect(!text.contains("s3cret-Pa55"))
        }
    }
}

// MARK: - Client and server

private let secret = Array("0123456789abcdef0123456789abcdef".utf8)
private let alice = DigestCredentials(username: "alice", password: "wonderland")
private let uri = "sip:gw.example.net"

@Suite("Digest client and server")
struct DigestClientServerTests {
    static let qopSettings: [[DigestQop]] = [[.auth], [.authInt], [], [.auth, .authInt]]

    @Test(arguments: DigestAlgorithm.allCases, qopSettings)
    func roundTrip(algorithm: DigestAlgorithm, qop: [DigestQop]) throws {
        let server = DigestServer(realm: "gw.example.net", secret: secret, qopOptions: qop)
        let challenge = server.challenge(now: 1_000, algorithm: algorithm)
        #expect(challenge.algorithm == algorithm)
        #expect(challenge.qopOptions == qop)

        // Over the wire and back, as a real exchange would go.
        let received = try DigestChallenge.parse(challenge.serialize())
        var client = DigestClient()
        let body = Array("v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n".utf8)
        let auth = try client.authorization(
            for: [received], method: "INVITE", uri: uri, body: body, credentials: alice)
        #expect(auth.qop == (qop.contains(.auth) ? .auth : qop.first))
        #expect((auth.cnonce != nil) == (auth.qop != nil || algorithm.isSession))
        #expect((auth.nc != nil) == (auth.qop != nil))

        let parsed = try DigestAuthorization.parse(auth.serialize())
        #expect(
            server.verify(
                parsed, method: "INVITE", password: "wonderland", now: 1_010,
                body: body, requestURI: uri) == .valid)
        // The method is part of A2.
        #expect(
            server.verify(
                parsed, method: "BYE", password: "wonderland", now: 1_010,
                body: body) == .invalid(.wrongResponse))
        if auth.qop == .authInt {
            #expect(
                server.verify(
                    parsed, method: "INVITE", password: "wonderland", now: 1_010,
                    body: []) == .invalid(.wrongResponse))
        }
    }

    @Test func wrongPasswordIsInvalid() throws {
        let server = DigestServer(realm: "r", secret: secret)
        var client = DigestClient()
        let auth = try client.authorization(
            for: server.challenge(now: 0), method: "REGISTER", uri: uri,
            credentials: DigestCredentials(username: "alice", password: "guess"))
        #expect(
            server.verify(auth, method: "REGISTER", password: "wonderland", now: 1)
                == .invalid(.wrongResponse))
    }

    @Test func staleNonceWithGoodResponse() throws {
        let server = DigestServer(realm: "r", secret: secret)  // lifetime 300 s
        #expect(server.nonceLifetime == 300)
        var client = DigestClient()
        let auth = try client.authorization(
            for: server.challenge(now: 5_000), method: "REGISTER", uri: uri, credentials: alice)
        #expect(
            server.verify(auth, method: "REGISTER", password: "wonderland", now: 5_299)
                == .valid)
        #expect(
            server.verify(auth, method: "REGISTER", password: "wonderland", now: 5_301)
                == .stale)
        // A stale nonce with a wrong password is plainly invalid, not stale.
        #expect(
            server.verify(auth, method: "REGISTER", password: "nope", now: 5_301)
                == .invalid(.wrongResponse))

        let fresh = server.challenge(now: 5_301, stale: true)
        #expect(fresh.stale)
        #expect(try DigestChallenge.parse(fresh.serialize()).stale)
        let retry = try client.authorization(
            for: fresh, method: "REGISTER", uri: uri, credentials: alice)
        #expect(
            server.verify(retry, method: "REGISTER", password: "wonderland", now: 5_302)
                == .valid)
    }

    @Test func customLifetime() throws {
        let server = DigestServer(realm: "r", secret: secret, nonceLifetime: 30)
        var client = DigestClient()
        let auth = try client.authorization(
            for: server.challenge(now: 100), method: "OPTIONS", uri: uri, credentials: alice)
        #expect(
            server.verify(auth, method: "OPTIONS", password: "wonderland", now: 131)
                == .stale)
    }

    @Test(arguments: [
        "dcd98b7102dd2f0e8b11d0f600bfb0c093",  // someone else's nonce
        "",
        "zz",
        String(repeating: "0", count: 64)  // right shape, wrong MAC
    ])
    func foreignNonceIsInvalid(nonce: String) throws {
        let server = DigestServer(realm: "r", secret: secret)
        var client = DigestClient()
        let auth = try client.authorization(
            for: DigestChallenge(realm: "r", nonce: nonce, algorithm: .sha256, qopOptions: [.auth]),
            method: "INVITE", uri: uri, credentials: alice)
        #expect(
            server.verify(auth, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.foreignNonce))
    }

    @Test func tamperedNonceTimestampIsInvalid() throws {
        let server = DigestServer(realm: "r", secret: secret)
        var challenge = server.challenge(now: 0)
        // Push the timestamp forward by editing a timestamp digit: the MAC no longer fits.
        var digits = Array(challenge.nonce)
        digits[10] = digits[10] == "f" ? "e" : "f"
        challenge.nonce = String(digits)
        var client = DigestClient()
        let auth = try client.authorization(
            for: challenge, method: "INVITE", uri: uri, credentials: alice)
        #expect(
            server.verify(auth, method: "INVITE", password: "wonderland", now: 1_000)
                == .invalid(.foreignNonce))
    }

    @Test func nonceFromAnotherSecretOrRealmIsInvalid() throws {
        let server = DigestServer(realm: "r", secret: secret)
        let other = DigestServer(realm: "r", secret: Array("another secret".utf8))
        let otherRealm = DigestServer(realm: "r2", secret: secret)
        var client = DigestClient()
        let forged = try client.authorization(
            for: other.challenge(now: 0), method: "INVITE", uri: uri, credentials: alice)
        #expect(
            server.verify(forged, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.foreignNonce))
        // A nonce minted for realm r2, replayed with realm r.
        var replayed = try client.authorization(
            for: otherRealm.challenge(now: 0), method: "INVITE", uri: uri, credentials: alice)
        replayed.realm = "r"
        #expect(
            server.verify(replayed, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.foreignNonce))
    }

    @Test func nonceIsBoundToItsAlgorithm() throws {
        let server = DigestServer(realm: "r", secret: secret)
        var challenge = server.challenge(now: 0, algorithm: .sha256)
        challenge.algorithm = .md5  // a downgrade in transit
        var client = DigestClient()
        let auth = try client.authorization(
            for: challenge, method: "INVITE", uri: uri, credentials: alice)
        #expect(
            server.verify(auth, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.foreignNonce))
    }

    @Test func realmMismatchAndUnacceptedAlgorithm() throws {
        let server = DigestServer(realm: "r", secret: secret, acceptedAlgorithms: [.sha256])
        var client = DigestClient()
        var auth = try client.authorization(
            for: server.challenge(now: 0), method: "INVITE", uri: uri, credentials: alice)
        #expect(server.verify(auth, method: "INVITE", password: "wonderland", now: 1) == .valid)
        auth.realm = "elsewhere"
        #expect(
            server.verify(auth, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.realmMismatch))

        let md5 = try client.authorization(
            for: DigestServer(realm: "r", secret: secret).challenge(now: 0, algorithm: .md5),
            method: "INVITE", uri: uri, credentials: alice)
        #expect(
            server.verify(md5, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.unsupportedAlgorithm))
        #expect(server.challenges(now: 0).map(\.algorithm) == [.sha256])
    }

    @Test func qopDowngradeAndUriMismatchAreInvalid() throws {
        let server = DigestServer(realm: "r", secret: secret)  // offers qop=auth
        var challenge = server.challenge(now: 0)
        challenge.qopOptions = []  // stripped in transit: client answers RFC 2069 style
        var client = DigestClient()
        let auth = try client.authorization(
            for: challenge, method: "INVITE", uri: uri, credentials: alice)
        #expect(auth.qop == nil)
        #expect(
            server.verify(auth, method: "INVITE", password: "wonderland", now: 1)
                == .invalid(.missingQop))

        let good = try client.authorization(
            for: server.challenge(now: 0), method: "INVITE", uri: uri, credentials: alice)
        #expect(
            server.verify(
                good, method: "INVITE", password: "wonderland", now: 1,
                requestURI: "sip:other.example") == .invalid(.uriMismatch))
    }

    @Test func ncCountsUpPerNonceAndResetsOnNewNonce() throws {
        let server = DigestServer(realm: "r", secret: secret)
        let first = server.challenge(now: 0)
        var client = DigestClient()
        var counts: [UInt32?] = []
        var cnonces: Set<String> = []
        for _ in 0..<3 {
            let auth = try client.authorization(
                for: first, method: "REGISTER", uri: uri, credentials: alice)
            counts.append(auth.nc)
            cnonces.insert(auth.cnonce ?? "")
            #expect(
                server.verify(auth, method: "REGISTER", password: "wonderland", now: 1)
                    == .valid)
        }
        #expect(counts == [1, 2, 3])
        #expect(cnonces.count == 3)  // a fresh cnonce each time

        let second = server.challenge(now: 10)
        #expect(second.nonce != first.nonce)
        let afterNewNonce = try client.authorization(
            for: second, method: "REGISTER", uri: uri, credentials: alice)
        #expect(afterNewNonce.nc == 1)
        #expect(afterNewNonce.serialize().contains("nc=00000001"))
        let next = try client.authorization(
            for: second, method: "REGISTER", uri: uri, credentials: alice)
        #expect(next.serialize().contains("nc=00000002"))

        // Another realm keeps its own count.
        let proxy = DigestChallenge(realm: "proxy", nonce: "p", qopOptions: [.auth])
        #expect(
            try client.authorization(
                for: proxy, method: "REGISTER", uri: uri, credentials: alice
            ).nc == 1)
        #expect(
            try client.authorization(
                for: second, method: "REGISTER", uri: uri, credentials: alice
            ).nc == 3)

        client.reset()
        #expect(
            try client.authorization(
                for: second, method: "REGISTER", uri: uri, credentials: alice
            ).nc == 1)
    }

    @Test func sha256ChosenOverMD5() throws {
        let server = DigestServer(realm: "r", secret: secret)
        let offered = server.challenges(now: 0)
        #expect(offered.map(\.algorithm) == [.sha256, .md5])
        var client = DigestClient()
        for order in [offered, offered.reversed()] {
            let auth = try client.authorization(
                for: order, method: "INVITE", uri: uri, credentials: alice)
            #expect(auth.algorithm == .sha256)
            #expect(auth.response.count == 64)
            #expect(
                server.verify(auth, method: "INVITE", password: "wonderland", now: 1)
                    == .valid)
        }
    }

    @Test func authPreferredOverAuthInt() throws {
        var client = DigestClient()
        let auth = try client.authorization(
            for: DigestChallenge(realm: "r", nonce: "n", qopOptions: [.authInt, .auth]),
            method: "INVITE", uri: uri, credentials: alice)
        #expect(auth.qop == .auth)
    }

    @Test func noChallengesIsAnError() {
        var client = DigestClient()
        #expect(throws: DigestError(.noUsableChallenge, "no challenges")) {
            _ = try client.authorization(
                for: [], method: "INVITE", uri: uri, credentials: alice)
        }
    }

    @Test func serverDescriptionHidesSecret() {
        let server = DigestServer(realm: "r", secret: Array("TOPSECRETKEY".utf8))
        var dumped = ""
        dump(server, to: &dumped)
        #expect(!"\(server)".contains("TOPSECRETKEY"))
        #expect(!dumped.contains("secret"))
        #expect(dumped.contains("realm"))
    }
}
