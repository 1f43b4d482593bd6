import Foundation
import Glibc
import IOCore
import TestSupport
import Testing

@testable import TLS

/// Our server `DTLSTransport` on a real UDP socket (127.0.0.1, a port the OS picks) against
/// `openssl s_client -dtls1_2 -use_srtp`: the handshake over real datagrams, and the keying
/// material s_client exports compared with our keys (RFC 5764 §4.2's layout). The s_client
/// process is always stopped, within seconds, whatever happens.
// Serialized for the cores: each runs an `openssl s_client` against a handshake with real retransmission timers.
@Suite(.serialized) struct DTLSInteropTests {
    /// A self-signed client certificate made by `openssl`, and its SHA-256 fingerprint as
    /// `openssl x509 -fingerprint` prints it.
    struct PeerIdentity {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("peer.pem").path }
        var key: String { directory.appendingPathComponent("peer.key").path }
        let fingerprint: DTLSFingerprint

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-dtls-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = directory.appendingPathComponent("peer.key").path,
                cert = directory.appendingPathComponent("peer.pem").path
            _ = try await Self.openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=browser"
            ])
            let line = try await Self.openssl(["x509", "-noout", "-fingerprint", "-sha256", "-in", cert])
            let hex =
                line.split(separator: "=", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                ?? ""
            guard let fingerprint = DTLSFingerprint(sdp: "sha-256 " + hex) else {
                throw CocoaError(.fileReadCorruptFile)
            }
            self.fingerprint = fingerprint
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        /// Runs openssl to its end; its standard output (stderr dropped).
        static func openssl(_ arguments: [String]) async throws -> String {
            try await ChildProcess.run("/usr/bin/openssl", arguments, discardingErrors: true).output
        }
    }

    /// `openssl` with `arguments` (s_client or s_server), stdin a pipe the test closes to end
    /// it, stdout to a file; no signal blocked, so the SIGTERM of `stop` ends it at once.
    static func openssl(_ arguments: [String], stdin: Pipe) throws -> ChildProcess {
        try ChildProcess(
            "/usr/bin/openssl", arguments, discardingErrors: true, standardInput: stdin, unblockingSignals: true)
    }

    /// Seconds since `origin`.
    static func seconds(since origin: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - origin
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// `run` on a dispatch thread: it polls the socket and the handshake's real-time timer
    /// every 2 ms, which would hold a thread of the cooperative pool for the whole handshake.
    static func handshake(
        _ transport: inout DTLSTransport, on socket: UDPSocket, peer: RawSocketAddress?,
        first: DTLSTransport.Output, origin: ContinuousClock.Instant
    ) async -> DTLSFailure? {
        let start = transport
        let (ended, failure) = await offThePool { () -> (DTLSTransport, DTLSFailure?) in
            var driven = start
            let failure = run(&driven, on: socket, peer: peer, first: first, origin: origin)
            return (driven, failure)
        }
        transport = ended
        return failure
    }

    /// Drives `transport` over `socket` until it has keys, fails, or `limit` seconds pass;
    /// `peer` is learnt from the first datagram when nil (a server). Blocks: see `handshake`.
    static func run(

        _ transport: inout DTLSTransport, on socket: UDPSocket, peer: RawSocketAddress?, first: DTLSTransport.Output,
        origin: ContinuousClock.Instant, limit: Double = 10
    ) -> DTLSFailure? {
        var peerAddress = peer, from = RawSocketAddress()
        var buffer = [UInt8](repeating: 0, count: 2048)
        var out = first
        while true {
            if let f = out.failure { return f }
            if let peerAddress { for d in out.datagrams { _ = d.withUnsafeBytes { socket.send($0, to: peerAddress) } } }
            if transport.keys != nil || seconds(since: origin) > limit { return nil }
            let now = seconds(since: origin)
            if let n = buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) {
                peerAddress = from
                out = buffer.withUnsafeBytes {
                    transport.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n]), now: now)
                }
            } else if let deadline = transport.deadline, now >= deadline {
                out = transport.handleTimeout(now: now)
            } else {
                out = DTLSTransport.Output()
                usleep(2_000)  // on the dispatch thread of `handshake`
            }
        }
    }

    /// s_client's or s_server's "Keying material: HEX" as bytes.
    static func keyingMaterial(_ text: String) -> [UInt8] {
        let hex =
            text.split(separator: "\n").first { $0.contains("Keying material:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
        let chars = Array(hex)
        return stride(from: 0, to: chars.count - 1, by: 2).compactMap { UInt8(String(chars[$0...$0 + 1]), radix: 16) }
    }

    /// RFC 5764 §4.2: client key | server key | client salt | server salt.
    static func expectLayout(_ keys: DTLSSRTPKeys, material: [UInt8], weAreServer: Bool) {
        let k = keys.profile.keyLength, s = keys.profile.saltLength
        #expect(material.count == 2 * (k + s))
        guard material.count == 2 * (k + s) else { return }
        let client = Array(material[0..<k] + material[2 * k..<2 * k + s])
        let server = Array(material[k..<2 * k] + material[2 * k + s..<2 * (k + s)])
        #expect(keys.sendKey == (weAreServer ? server : client))
        #expect(keys.receiveKey == (weAreServer ? client : server))
    }

    @Test(.timeLimit(.minutes(1)), arguments: [DTLSSRTPProfile.aes128CMSHA1_80, .aeadAES128GCM])
    func opensslClientAgainstOurServer(profile: DTLSSRTPProfile) async throws {
        let peer = try await PeerIdentity()
        defer { peer.remove() }
        let certificate = try DTLSCertificate()
        let context = try DTLSContext(certificate: certificate)
        var server = try DTLSTransport(context: context, role: .server, peerFingerprints: [peer.fingerprint])
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let length = 2 * (profile.keyLength + profile.saltLength)

        let stdin = Pipe()
        let client = try Self.openssl(
            [
                "s_client", "-dtls1_2", "-connect", "127.0.0.1:\(socket.local.port)", "-mtu", "1200",
                "-use_srtp", profile.rawValue, "-cert", peer.certificate, "-key", peer.key,
                "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "\(length)"
            ], stdin: stdin)
        defer { client.stop() }

        let origin = ContinuousClock.now
        let first = server.start(now: 0)
        let failure = await Self.handshake(&server, on: socket, peer: nil, first: first, origin: origin)
        #expect(failure == nil)
        let keys = try #require(server.keys)
        #expect(keys.profile == profile)

        // Once s_client has printed its session, close its stdin: it sends close_notify and ends.
        #expect(await client.waitForOutput(containing: "Keying material:", timeout: 5), "\(client.output)")
        try? stdin.fileHandleForWriting.close()
        var buffer = [UInt8](repeating: 0, count: 2048), from = RawSocketAddress()
        _ = await eventually(timeout: 3) {
            while let n = buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) {
                _ = buffer.withUnsafeBytes {
                    server.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n]), now: Self.seconds(since: origin))
                }
            }
            return !client.isRunning
        }
        await client.stopped()
        let text = client.output
        #expect(text.contains("SRTP Extension negotiated, profile=\(profile.rawValue)"))
        Self.expectLayout(keys, material: Self.keyingMaterial(text), weAreServer: true)
        #expect(server.state == .closed)
    }

    @Test(.timeLimit(.minutes(1))) func ourClientAgainstOpensslServer() async throws {
        let peer = try await PeerIdentity()
        defer { peer.remove() }
        let certificate = try DTLSCertificate()
        let context = try DTLSContext(certificate: certificate)
        var client = try DTLSTransport(context: context, role: .client, peerFingerprints: [peer.fingerprint])
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        // A port for s_server: one the OS just gave us and took back (s_server binds it).
        let port = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0)).local.port

        let stdin = Pipe()
        let openssl = try Self.openssl(
            [
                "s_server", "-dtls1_2", "-accept", "127.0.0.1:\(port)", "-naccept", "1", "-mtu", "1200",
                "-cert", peer.certificate, "-key", peer.key, "-verify", "1",
                "-use_srtp", "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80",
                "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "56"
            ], stdin: stdin)
        defer { openssl.stop() }
        // s_server says ACCEPT once it listens.
        #expect(await openssl.waitForOutput(containing: "ACCEPT", timeout: 5), "\(openssl.output)")

        let origin = ContinuousClock.now
        let server = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: port)))
        let first = client.start(now: 0)
        let failure = await Self.handshake(&client, on: socket, peer: server, first: first, origin: origin)
        #expect(failure == nil)
        let keys = try #require(client.keys)
        #expect(keys.profile == .aeadAES128GCM)

        // Once s_server has printed the keys, our close_notify ends its one connection, and
        // with it s_server.
        #expect(await openssl.waitForOutput(containing: "Keying material:", timeout: 5), "\(openssl.output)")
        for d in client.close().datagrams { _ = d.withUnsafeBytes { socket.send($0, to: server) } }
        #expect(await openssl.exit(timeout: 3) != nil, "s_server did not end at our close_notify")
        let text = openssl.output
        await openssl.stopped()
        Self.expectLayout(keys, material: Self.keyingMaterial(text), weAreServer: false)
    }
}
