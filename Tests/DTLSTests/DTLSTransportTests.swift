import Foundation
import Testing

@testable import TLS

/// `DTLSTransport` without sockets: a client and a server, each with its own generated
/// certificate, pump datagrams into each other in memory.
@Suite struct DTLSTransportTests {
    /// Both ends' certificates and contexts.
    struct Ends {
        let clientCertificate: DTLSCertificate
        let serverCertificate: DTLSCertificate
        let clientContext: DTLSContext
        let serverContext: DTLSContext

        init(
            clientProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.preferred,
            serverProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.preferred
        ) throws {
            clientCertificate = try DTLSCertificate(commonName: "client")
            serverCertificate = try DTLSCertificate()
            clientContext = try DTLSContext(certificate: clientCertificate, profiles: clientProfiles)
            serverContext = try DTLSContext(certificate: serverCertificate, profiles: serverProfiles)
        }

        func client(expecting: DTLSFingerprint? = nil, settings: DTLSSettings = DTLSSettings()) throws -> DTLSTransport
        {
            try DTLSTransport(
                context: clientContext, role: .client, peerFingerprints: [expecting ?? serverCertificate.fingerprint],
                settings: settings)
        }

        func server(expecting: DTLSFingerprint? = nil, settings: DTLSSettings = DTLSSettings()) throws -> DTLSTransport
        {
            try DTLSTransport(
                context: serverContext, role: .server, peerFingerprints: [expecting ?? clientCertificate.fingerprint],
                settings: settings)
        }
    }

    /// What one side saw.
    struct Side {
        var keys: DTLSSRTPKeys?
        var failure: DTLSFailure?
        var closed = false
        var sent: [[UInt8]] = []

        mutating func add(_ out: DTLSTransport.Output) {
            if let k = out.keys { keys = k }
            if let f = out.failure { failure = f }
            if out.closed { closed = true }
            sent += out.datagrams
        }
    }

    /// Moves datagrams both ways until none is left; `drop` decides per datagram (its
    /// direction, its index in that direction).
    static func pump(
        _ client: inout DTLSTransport, _ server: inout DTLSTransport, toServer initial: [[UInt8]],
        c: inout Side, s: inout Side, now: Double = 0,
        drop: (_ toServer: Bool, _ index: Int) -> Bool = { _, _ in false }, counts: inout (Int, Int)
    ) {
        var toServer = initial, toClient: [[UInt8]] = []
        for _ in 0..<30 where !toServer.isEmpty || !toClient.isEmpty {
            for d in toServer {
                defer { counts.0 += 1 }
                if drop(true, counts.0) { continue }
                let out = server.receive(d, now: now)
                s.add(out)
                toClient += out.datagrams
            }
            toServer = []
            for d in toClient {
                defer { counts.1 += 1 }
                if drop(false, counts.1) { continue }
                let out = client.receive(d, now: now)
                c.add(out)
                toServer += out.datagrams
            }
            toClient = []
        }
    }

    static func handshake(_ client: inout DTLSTransport, _ server: inout DTLSTransport) -> (Side, Side) {
        var c = Side(), s = Side(), counts = (0, 0)
        let first = client.start(now: 0)
        c.add(first)
        _ = server.start(now: 0)
        pump(&client, &server, toServer: first.datagrams, c: &c, s: &s, counts: &counts)
        return (c, s)
    }

    /// A datagram's DTLS records (RFC 6347 §4.1: 13-byte header, 2-byte length at 11):
    /// their content types, or nil when the datagram is not whole records.
    static func records(_ datagram: [UInt8]) -> [UInt8]? {
        var offset = 0, types: [UInt8] = []
        while offset < datagram.count {
            // DTLS 1.2 (FEFD), or 1.0 (FEFF) on a first ClientHello (RFC 6347 §4.1).
            guard datagram.count - offset >= 13, datagram[offset + 1] == 0xFE,
                datagram[offset + 2] == 0xFD || datagram[offset + 2] == 0xFF
            else { return nil }
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            guard offset + 13 + length <= datagram.count else { return nil }
            types.append(datagram[offset])
            offset += 13 + length
        }
        return types.isEmpty ? nil : types
    }

    @Test func handshakeExportsMirroredKeys() throws {
        let ends = try Ends()
        var client = try ends.client(), server = try ends.server()
        let (c, s) = Self.handshake(&client, &server)
        #expect(c.failure == nil && s.failure == nil)
        #expect(client.state == .connected && server.state == .connected)
        let ck = try #require(c.keys), sk = try #require(s.keys)
        #expect(ck == client.keys && sk == server.keys)
        #expect(ck.profile == .aeadAES128GCM && sk.profile == .aeadAES128GCM)
        #expect(ck.suiteName == "AEAD_AES_128_GCM")
        #expect(ck.sendKey.count == 28 && ck.receiveKey.count == 28)
        #expect(ck.sendKey == sk.receiveKey && ck.receiveKey == sk.sendKey)
        #expect(ck.sendKey != ck.receiveKey)
        #expect(client.deadline == nil && server.deadline == nil)
        // Every datagram is whole DTLS 1.2 records and fits the MTU.
        for d in c.sent + s.sent {
            #expect(d.count <= 1200)
            #expect(Self.records(d) != nil)
        }
        // The keys never show in text.
        #expect(!"\(ck)".contains(ck.sendKey.map { String($0, radix: 16) }.joined()))
        #expect("\(ck)" == "DTLSSRTPKeys(AEAD_AES_128_GCM, keys hidden)")
    }

    @Test func serverPreferenceAndAESCM() throws {
        // The client prefers GCM, the server only takes AES-CM: AES-CM, 30-byte keys.
        let ends = try Ends(serverProfiles: [.aes128CMSHA1_80])
        var client = try ends.client(), server = try ends.server()
        let (c, s) = Self.handshake(&client, &server)
        let ck = try #require(c.keys), sk = try #require(s.keys)
        #expect(ck.profile == .aes128CMSHA1_80 && sk.profile == .aes128CMSHA1_80)
        #expect(ck.suiteName == "AES_CM_128_HMAC_SHA1_80")
        #expect(ck.sendKey.count == 30 && ck.sendKey == sk.receiveKey && ck.receiveKey == sk.sendKey)

        // The server's order wins over the client's.
        let other = try Ends(
            clientProfiles: [.aeadAES128GCM, .aes128CMSHA1_80], serverProfiles: [.aes128CMSHA1_80, .aeadAES128GCM])
        var client2 = try other.client(), server2 = try other.server()
        let (c2, _) = Self.handshake(&client2, &server2)
        #expect(c2.keys?.profile == .aes128CMSHA1_80)
    }

    @Test func noCommonProfileExportsNothing() throws {
        let ends = try Ends(clientProfiles: [.aes128CMSHA1_80], serverProfiles: [.aeadAES128GCM])
        var client = try ends.client(), server = try ends.server()
        let (c, s) = Self.handshake(&client, &server)
        #expect(s.failure == .noSRTPProfile)
        #expect(c.keys == nil && s.keys == nil && client.keys == nil && server.keys == nil)
        #expect(client.state == .handshaking)  // it never got our Finished; it will time out
    }

    @Test func serverRefusesAWrongClientFingerprint() throws {
        let ends = try Ends()
        let stranger = try DTLSCertificate(commonName: "stranger")
        var client = try ends.client(), server = try ends.server(expecting: stranger.fingerprint)
        let (c, s) = Self.handshake(&client, &server)
        #expect(s.failure == .fingerprintMismatch("sha-256"))
        #expect(s.failure?.kind == "fingerprint_mismatch")
        #expect(c.failure == .certificateRefusedByPeer("bad certificate"))
        #expect(c.keys == nil && s.keys == nil && client.keys == nil && server.keys == nil)
        #expect(client.deadline == nil && server.deadline == nil)
    }

    @Test func clientRefusesAWrongServerFingerprint() throws {
        let ends = try Ends()
        let stranger = try DTLSCertificate(commonName: "stranger")
        var client = try ends.client(expecting: stranger.fingerprint), server = try ends.server()
        let (c, s) = Self.handshake(&client, &server)
        #expect(c.failure == .fingerprintMismatch("sha-256"))
        #expect(s.failure == .certificateRefusedByPeer("bad certificate"))
        #expect(c.keys == nil && s.keys == nil)
        // The failure's text names the hash, never a digest.
        let text = c.failure?.description ?? ""
        #expect(text == "the peer's certificate does not match its SDP fingerprint (sha-256)")
    }

    @Test func strongestOfferedHashIsChecked() throws {
        let ends = try Ends()
        // sha-1 wrong but sha-512 right: the strongest decides (RFC 8122 §5).
        let stranger = try DTLSCertificate(commonName: "stranger")
        var client = try DTLSTransport(
            context: ends.clientContext, role: .client,
            peerFingerprints: [stranger.fingerprint(.sha1), ends.serverCertificate.fingerprint(.sha512)])
        var server = try ends.server()
        let (c, _) = Self.handshake(&client, &server)
        #expect(c.failure == nil && c.keys != nil)

        var client2 = try DTLSTransport(
            context: ends.clientContext, role: .client,
            peerFingerprints: [ends.serverCertificate.fingerprint(.sha1), stranger.fingerprint(.sha384)])
        var server2 = try ends.server()
        let (c2, _) = Self.handshake(&client2, &server2)
        #expect(c2.failure == .fingerprintMismatch("sha-384"))
    }

    /// Waits (real time: OpenSSL's timer runs on its own clock; the wait is the behaviour
    /// under test, suspended, holding no thread) until `transport`'s deadline, then handles it.
    static func fire(_ transport: inout DTLSTransport, clock: ContinuousClock.Instant) async -> DTLSTransport.Output {
        let now = {
            Double((ContinuousClock.now - clock).components.attoseconds) / 1e18
                + Double((ContinuousClock.now - clock).components.seconds)
        }
        if let deadline = transport.deadline, deadline > now() {
            try? await Task.sleep(nanoseconds: UInt64((deadline - now()) * 1e9) + 1_000_000)
        }
        return transport.handleTimeout(now: now())
    }

    @Test func lostFirstFlightIsRetransmitted() async throws {
        let ends = try Ends()
        let fast = DTLSSettings(initialRetransmitTimeout: 0.05, handshakeTimeout: 5)
        let t0 = ContinuousClock.now
        var client = try ends.client(settings: fast), server = try ends.server(settings: fast)
        var c = Side(), s = Side(), counts = (0, 0)
        let first = client.start(now: 0)
        _ = server.start(now: 0)
        let deadline = try #require(client.deadline)
        #expect(deadline > 0.02 && deadline <= 0.06)
        // The ClientHello is lost.
        Self.pump(
            &client, &server, toServer: first.datagrams, c: &c, s: &s, drop: { toServer, i in toServer && i == 0 },
            counts: &counts)
        #expect(s.sent.isEmpty && c.keys == nil)
        let again = await Self.fire(&client, clock: t0)
        #expect(again.datagrams.count == 1)  // the ClientHello once more
        Self.pump(&client, &server, toServer: again.datagrams, c: &c, s: &s, counts: &counts)
        #expect(c.keys != nil && s.keys != nil && c.keys?.sendKey == s.keys?.receiveKey)
    }

    @Test func lostServerFlightIsRecovered() async throws {
        let ends = try Ends()
        let fast = DTLSSettings(initialRetransmitTimeout: 0.05, handshakeTimeout: 5)
        let t0 = ContinuousClock.now
        var client = try ends.client(settings: fast), server = try ends.server(settings: fast)
        var c = Side(), s = Side(), counts = (0, 0)
        let first = client.start(now: 0)
        // The server's whole first flight is lost.
        var lost = 0
        Self.pump(
            &client, &server, toServer: first.datagrams, c: &c, s: &s,
            drop: { toServer, _ in
                if !toServer { lost += 1; return true }
                return false
            }, counts: &counts)
        #expect(lost > 0 && c.keys == nil)
        // The client retransmits its ClientHello; the server answers it with its flight again
        // (or its own timer does).
        for _ in 0..<10 where c.keys == nil || s.keys == nil {
            let retry = await Self.fire(&client, clock: t0)
            c.add(retry)
            Self.pump(&client, &server, toServer: retry.datagrams, c: &c, s: &s, counts: &counts)
        }
        #expect(c.keys != nil && s.keys != nil && c.keys?.sendKey == s.keys?.receiveKey)
    }

    @Test func silentPeerTimesOut() async throws {
        let ends = try Ends()
        let settings = DTLSSettings(initialRetransmitTimeout: 0.05, handshakeTimeout: 0.4)
        let t0 = ContinuousClock.now
        var client = try ends.client(settings: settings)
        let first = client.start(now: 0)
        #expect(first.datagrams.count == 1)
        var sent = 0, failure: DTLSFailure?
        for _ in 0..<20 where failure == nil {
            let out = await Self.fire(&client, clock: t0)
            sent += out.datagrams.count
            failure = out.failure
        }
        #expect(failure == .handshakeTimeout && client.state == .failed(.handshakeTimeout))
        #expect(sent >= 2)  // 50, 100, 200 ms: retransmitted before giving up
        #expect(client.deadline == nil)
        let elapsed = ContinuousClock.now - t0
        #expect(elapsed >= .milliseconds(390) && elapsed < .seconds(3))

        // On the caller's clock alone: the default 10 s, a server that never hears a thing.
        var server = try ends.server()
        _ = server.start(now: 1000)
        #expect(server.deadline == 1010)
        #expect(server.handleTimeout(now: 1005).failure == nil)
        #expect(server.handleTimeout(now: 1010).failure == .handshakeTimeout)
        #expect(DTLSFailure.handshakeTimeout.kind == "handshake_timeout")
    }

    @Test func garbageIsDropped() throws {
        let ends = try Ends()
        var client = try ends.client(), server = try ends.server()
        var rng = SystemRandomNumberGenerator()
        let garbage: [[UInt8]] =
            [
                [], [0x16], [0x16, 0xFE, 0xFD],
                [0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF],  // a header claiming 64 KiB
                [0x17, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 9, 0, 4, 1, 2, 3, 4],  // application data, wrong epoch
                (0..<2000).map { _ in UInt8.random(in: 0...255, using: &rng) },
                [0x00, 0x01, 0x00, 0x00] + [UInt8](repeating: 0, count: 16)  // a STUN header
            ]
            + (0..<50).map { _ in
                [UInt8.random(in: 20...63, using: &rng), 0x01]
                    + (0..<40).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
        for g in garbage { _ = server.receive(g, now: 0) }
        #expect(server.state == .handshaking)
        let (c, s) = Self.handshake(&client, &server)
        #expect(c.keys != nil && s.keys != nil)
        for g in garbage {
            _ = server.receive(g, now: 1)
            _ = client.receive(g, now: 1)
        }
        #expect(client.state == .connected && server.state == .connected)
    }

    @Test func shortProtectedRecordsNeverReachOpenSSL() throws {
        // OpenSSL 3.0 fails the association on a GCM record shorter than nonce + tag.
        let short: [UInt8] = [0x17, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 9, 0, 4, 1, 2, 3, 4]
        let header: [UInt8] = [0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0xAA, 0xBB]
        let long: [UInt8] = [0x17, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 2, 0, 24] + [UInt8](repeating: 7, count: 24)
        func filter(_ d: [UInt8], _ minimum: Int?) -> [UInt8]? {
            d.withUnsafeBytes { DTLSRecordFilter.admissible($0, minimumProtected: minimum) }
        }
        #expect(filter(short, 24) == nil)
        #expect(filter(short, nil) == nil)  // no cipher yet: no protected record is genuine
        #expect(filter(header + short + long, 24) == header + long)
        #expect(filter(long, nil) == nil && filter(long, 24) == long)
        #expect(filter(header + [0x16, 0xFE], 24) == header)  // a truncated tail goes
        #expect(filter([0x16, 0xFE, 0xFD], 0) == nil)

        let ends = try Ends()
        var client = try ends.client(), server = try ends.server()
        _ = Self.handshake(&client, &server)
        _ = client.receive(short, now: 1)
        _ = server.receive(short, now: 1)
        #expect(client.state == .connected && server.state == .connected)
        // And the association still works: a close_notify gets through.
        let bye = client.close()
        #expect(bye.datagrams.count == 1)
        #expect(bye.datagrams.contains { server.receive($0, now: 2).closed })
    }

    @Test func closeNotifyReachesThePeer() throws {
        let ends = try Ends()
        var client = try ends.client(), server = try ends.server()
        _ = Self.handshake(&client, &server)
        let bye = client.close()
        #expect(client.state == .closed && bye.datagrams.count == 1)
        var closed = false
        for d in bye.datagrams { closed = server.receive(d, now: 1).closed || closed }
        #expect(closed && server.state == .closed)
    }

    @Test func smallMTUSplitsTheCertificateFlight() throws {
        let ends = try Ends()
        let small = DTLSSettings(mtu: 300)
        var client = try ends.client(settings: small), server = try ends.server(settings: small)
        let (c, s) = Self.handshake(&client, &server)
        #expect(c.keys != nil && s.keys != nil)
        for d in c.sent + s.sent {
            #expect(d.count <= 300)
            #expect(Self.records(d) != nil)
        }
        #expect(s.sent.count > 3)
    }

    @Test func configurationIsRefusedCleanly() throws {
        let certificate = try DTLSCertificate()
        #expect(throws: DTLSFailure.self) { try DTLSContext(certificate: certificate, profiles: []) }
        let context = try DTLSContext(certificate: certificate)
        #expect(throws: DTLSFailure.self) {
            try DTLSTransport(
                context: context, role: .server, peerFingerprints: [certificate.fingerprint],
                settings: DTLSSettings(mtu: 40))
        }
    }
}
