import Foundation
import Glibc
import IOCore
import Testing
@testable import TLS

/// Our server `DTLSTransport` on a real UDP socket (127.0.0.1, a port the OS picks) against
/// `openssl s_client -dtls1_2 -use_srtp`: the handshake over real datagrams, and the keying
/// material s_client exports compared with our keys (RFC 5764 §4.2's layout). The s_client
/// process is always stopped, within seconds, whatever happens.
@Suite(.serialized) struct DTLSInteropTests {
    /// A self-signed client certificate made by `openssl`, and its SHA-256 fingerprint as
    /// `openssl x509 -fingerprint` prints it.
    struct PeerIdentity {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("peer.pem").path }
        var key: String { directory.appendingPathComponent("peer.key").path }
        let fingerprint: DTLSFingerprint

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-dtls-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = directory.appendingPathComponent("peer.key").path, cert = directory.appendingPathComponent("peer.pem").path
            _ = try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                  "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=browser"])
            let line = try Self.openssl(["x509", "-noout", "-fingerprint", "-sha256", "-in", cert])
            let hex = line.split(separator: "=", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
            guard let fingerprint = DTLSFingerprint(sdp: "sha-256 " + hex) else { throw CocoaError(.fileReadCorruptFile) }
            self.fingerprint = fingerprint
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        static func openssl(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Stops `process`: SIGTERM, then SIGKILL if it is still there after `grace` seconds.
    static func stop(_ process: Process, grace: Double = 2) {
        guard process.isRunning else { return }
        process.terminate()
        let until = Date().addingTimeInterval(grace)
        while process.isRunning, Date() < until { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    @Test(.timeLimit(.minutes(1))) func opensslClientAgainstOurServer() throws {
        let peer = try PeerIdentity()
        defer { peer.remove() }
        let certificate = try DTLSCertificate()
        let context = try DTLSContext(certificate: certificate)
        var server = try DTLSTransport(context: context, role: .server, peerFingerprints: [peer.fingerprint])
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_client", "-dtls1_2", "-connect", "127.0.0.1:\(socket.local.port)", "-mtu", "1200",
                             "-use_srtp", "SRTP_AES128_CM_SHA1_80", "-cert", peer.certificate, "-key", peer.key,
                             "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "60"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { Self.stop(process) }

        let clock = ContinuousClock.now
        func now() -> Double { let d = ContinuousClock.now - clock; return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        _ = server.start(now: now())
        var from = RawSocketAddress(), peerAddress: RawSocketAddress?
        var buffer = [UInt8](repeating: 0, count: 2048)
        var failure: DTLSFailure?
        while server.keys == nil, failure == nil, now() < 10 {
            let n = buffer.withUnsafeMutableBytes { socket.receive(into: $0, from: &from) }
            var out = DTLSTransport.Output()
            if let n {
                peerAddress = from
                out = buffer.withUnsafeBytes { server.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n]), now: now()) }
            } else if let deadline = server.deadline, now() >= deadline {
                out = server.handleTimeout(now: now())
            } else {
                usleep(2_000)
            }
            if let f = out.failure { failure = f }
            if let peerAddress { for d in out.datagrams { _ = d.withUnsafeBytes { socket.send($0, to: peerAddress) } } }
        }
        #expect(failure == nil)
        let keys = try #require(server.keys)
        #expect(keys.profile == .aes128CMSHA1_80)

        // Let s_client print its session, then close its stdin: it sends close_notify and ends.
        usleep(300_000)
        try? stdin.fileHandleForWriting.close()
        let until = Date().addingTimeInterval(3)
        while process.isRunning, Date() < until {
            // Keep answering (its close_notify reaches us here).
            if let n = buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) {
                _ = buffer.withUnsafeBytes { server.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n]), now: now()) }
            }
            usleep(5_000)
        }
        Self.stop(process)
        let text = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("SRTP Extension negotiated, profile=SRTP_AES128_CM_SHA1_80"))
        let material = text.split(separator: "\n").first { $0.contains("Keying material:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
        #expect(material.count == 120)
        // client key | server key | client salt | server salt; we are the server.
        let bytes = stride(from: 0, to: material.count - 1, by: 2).compactMap { i -> UInt8? in
            let start = material.index(material.startIndex, offsetBy: i)
            return UInt8(material[start..<material.index(start, offsetBy: 2)], radix: 16)
        }
        #expect(bytes.count == 60)
        if bytes.count == 60 {
            #expect(keys.receiveKey == Array(bytes[0..<16] + bytes[32..<46]))
            #expect(keys.sendKey == Array(bytes[16..<32] + bytes[46..<60]))
        }
    }
}
