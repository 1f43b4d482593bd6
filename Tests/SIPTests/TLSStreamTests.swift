import Foundation
import TestSupport
import Testing

@testable import SIP
@testable import TLS

/// `TLSStream` without sockets: a client and a server stream pump their ciphertext into
/// each other in memory, with certificates the test makes with `openssl` (TestPKI).
@Suite struct TLSStreamTests {
    static let invite = Array("INVITE sip:+15551230001@carrier.test SIP/2.0\r\nContent-Length: 0\r\n\r\n".utf8)
    static let ok = Array("SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)

    /// What one side saw over a whole exchange.
    struct Side {
        var plaintext: [UInt8] = []
        var failure: TLSFailure?
        var established = false
        var closed = false

        mutating func add(_ out: TLSStream.Output) {
            plaintext += out.plaintext
            if out.failure != nil { failure = out.failure }
            if out.established { established = true }
            if out.closed { closed = true }
        }
    }

    struct Exchange {
        var client = Side()
        var server = Side()
        /// Every byte that crossed the "wire", both ways.
        var wire: [UInt8] = []
    }

    /// Starts the client, then moves bytes until neither side has any to send.
    static func exchange(
        _ client: inout TLSStream, _ server: inout TLSStream, clientSends: [UInt8] = invite,
        serverReplies: [UInt8]? = ok
    ) -> Exchange {
        var x = Exchange()
        var first = client.start()
        // Sent before the handshake: held until the server checked out.
        let held = client.send(clientSends)
        first.ciphertext += held.ciphertext
        x.client.add(first)
        var toServer = first.ciphertext, toClient: [UInt8] = []
        var replied = false
        for _ in 0..<50 where !toServer.isEmpty || !toClient.isEmpty {
            x.wire += toServer + toClient
            if !toServer.isEmpty {
                let out = toServer.withUnsafeBytes { server.receive($0) }
                toServer = []
                x.server.add(out)
                toClient += out.ciphertext
                if let serverReplies, !replied, x.server.plaintext == clientSends {
                    replied = true
                    let reply = server.send(serverReplies)
                    x.server.add(reply)
                    toClient += reply.ciphertext
                }
            }
            if !toClient.isEmpty {
                let out = toClient.withUnsafeBytes { client.receive($0) }
                toClient = []
                x.client.add(out)
                toServer += out.ciphertext
            }
        }
        return x
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }

    static func pair(
        _ pki: TestPKI, server cert: TestPKI.Issued, verifyClient: SIPTLSServerSettings.ClientVerification = .none,
        client: SIPTLSClientSettings? = nil, name: String = "carrier.test"
    ) throws -> (TLSStream, TLSStream) {
        let serverContext = try TLSContext(
            server: SIPTLSServerSettings(
                certificateFile: cert.certificate, keyFile: cert.key,
                clientCAFile: pki.caFile, verifyClient: verifyClient))
        let clientContext = try TLSContext(client: client ?? SIPTLSClientSettings(caFile: pki.caFile))
        let c = try #require(
            TLSStream(
                client: clientContext,
                target: SIPTLSTarget(serverName: name, client: client ?? .init(caFile: pki.caFile))))
        let s = try #require(TLSStream(server: serverContext))
        return (c, s)
    }

    @Test func requestAndResponseCrossEncrypted() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let cert = try await pki.issue("carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
        var (client, server) = try Self.pair(pki, server: cert)
        let x = Self.exchange(&client, &server)
        #expect(x.client.established && x.server.established)
        #expect(x.server.plaintext == Self.invite)
        #expect(x.client.plaintext == Self.ok)
        #expect(x.client.failure == nil && x.server.failure == nil)
        #expect(
            !Self.contains(x.wire, Array("INVITE".utf8)) && !Self.contains(x.wire, Array("SIP/2.0".utf8)),
            "plaintext on the wire")
        #expect(client.version == "TLSv1.3")
        #expect(client.peerNames?.dnsNames == ["carrier.test"])
    }

    struct FailureRow: Sendable, CustomStringConvertible {
        var name: String
        /// Which certificate the server shows.
        var certificate: String
        var expectedName = "carrier.test"
        var failure: TLSFailure
        var description: String { name }
    }

    static let failures: [FailureRow] = [
        FailureRow(
            name: "wrong name", certificate: "good", expectedName: "other.test",
            failure: .wrongName(expected: "other.test", presented: ["carrier.test"])),
        FailureRow(name: "expired", certificate: "expired", failure: .certificateExpired),
        FailureRow(name: "unknown CA", certificate: "rogue", failure: .unknownCA),
        FailureRow(
            name: "CN only, but a SAN of another type", certificate: "ip-only",
            failure: .wrongName(expected: "carrier.test", presented: ["127.0.0.1"]))
    ]

    /// The client refuses the server, and not one byte of the held INVITE leaves.
    @Test(arguments: failures)
    func clientRefusesTheServer(_ row: FailureRow) async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let rogue = try await TestPKI(name: "rogue CA")
        defer { rogue.remove() }
        let cert: TestPKI.Issued =
            switch row.certificate {
            case "expired":
                try await pki.issue(
                    "expired", commonName: "carrier.test", altNames: ["DNS:carrier.test"], expired: true)
            case "rogue": try await rogue.issue("rogue", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
            case "ip-only": try await pki.issue("ip", commonName: "carrier.test", altNames: ["IP:127.0.0.1"])
            default: try await pki.issue("carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
            }
        var (client, server) = try Self.pair(pki, server: cert, name: row.expectedName)
        let x = Self.exchange(&client, &server)
        #expect(x.client.failure == row.failure)
        #expect(!x.client.established)
        #expect(x.server.plaintext.isEmpty)
        #expect(!Self.contains(x.wire, Array("INVITE".utf8)))
        // The name check refuses before our Finished goes: the server never completes.
        if case .wrongName = row.failure { #expect(!x.server.established) }
    }

    @Test func aServerThatRequiresAClientCertificate() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let rogue = try await TestPKI(name: "rogue CA")
        defer { rogue.remove() }
        let cert = try await pki.issue("carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
        let mine = try await pki.issue("gw", commonName: "gw.test", altNames: ["DNS:gw.test"])
        let foreign = try await rogue.issue("gw-rogue", commonName: "gw.test", altNames: ["DNS:gw.test"])

        // Without one: the server refuses, the client learns why, the INVITE never arrives.
        var (client, server) = try Self.pair(pki, server: cert, verifyClient: .require)
        var x = Self.exchange(&client, &server)
        #expect(x.server.failure == .noPeerCertificate)
        #expect(x.client.failure == .clientCertificateRequired)
        #expect(x.server.plaintext.isEmpty)

        // With ours: it works, and the server sees our names.
        let withCertificate = SIPTLSClientSettings(
            caFile: pki.caFile, certificateFile: mine.certificate, keyFile: mine.key)
        (client, server) = try Self.pair(pki, server: cert, verifyClient: .require, client: withCertificate)
        x = Self.exchange(&client, &server)
        #expect(x.server.plaintext == Self.invite && x.client.plaintext == Self.ok)
        #expect(server.peerNames?.dnsNames == ["gw.test"])

        // One from a CA the server does not trust: refused, and the client is told.
        let untrusted = SIPTLSClientSettings(
            caFile: pki.caFile, certificateFile: foreign.certificate, keyFile: foreign.key)
        (client, server) = try Self.pair(pki, server: cert, verifyClient: .require, client: untrusted)
        x = Self.exchange(&client, &server)
        #expect(x.server.failure == .unknownCA)
        #expect(x.client.failure == .certificateRefusedByPeer("unknown CA"))
        #expect(x.server.plaintext.isEmpty)
    }

    /// `optional`: a client without a certificate is served; one with a certificate is checked.
    @Test func optionalClientCertificates() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let cert = try await pki.issue("carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
        let mine = try await pki.issue("gw", commonName: "gw.test", altNames: ["DNS:gw.test"])
        var (client, server) = try Self.pair(pki, server: cert, verifyClient: .optional)
        var x = Self.exchange(&client, &server)
        #expect(x.server.plaintext == Self.invite && x.client.plaintext == Self.ok)
        #expect(server.peerNames == nil)
        let withCertificate = SIPTLSClientSettings(
            caFile: pki.caFile, certificateFile: mine.certificate, keyFile: mine.key)
        (client, server) = try Self.pair(pki, server: cert, verifyClient: .optional, client: withCertificate)
        x = Self.exchange(&client, &server)
        #expect(x.server.plaintext == Self.invite)
        #expect(server.peerNames?.dnsNames == ["gw.test"])
    }

    @Test func plainSIPOnATLSPortIsNotTLS() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let cert = try await pki.issue("carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
        let context = try TLSContext(server: SIPTLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
        var server = try #require(TLSStream(server: context))
        let out = Self.invite.withUnsafeBytes { server.receive($0) }
        #expect(out.failure == .notTLS)
        #expect(out.plaintext.isEmpty)
    }

    @Test func unusableFilesSayWhich() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let a = try await pki.issue("a", commonName: "a.test", altNames: ["DNS:a.test"])
        let b = try await pki.issue("b", commonName: "b.test", altNames: ["DNS:b.test"])
        #expect(throws: TLSFailure.self) {
            try TLSContext(client: SIPTLSClientSettings(caFile: pki.path("missing.pem")))
        }
        do {
            _ = try TLSContext(server: SIPTLSServerSettings(certificateFile: a.certificate, keyFile: b.key))
            Issue.record("a key of another certificate was taken")
        } catch {
            #expect(error.description.contains("does not match the certificate"), "\(error)")
            #expect(!error.description.contains("PRIVATE KEY"))
        }
    }
}
