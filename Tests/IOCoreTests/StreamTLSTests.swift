import Foundation
import Synchronization
import Glibc
import IOCore
import TLS
import TestSupport
import Testing

/// TLS through the stream layer: `TLSStream` as the security layer of both ends (server and
/// client connections on one loop), and against `openssl s_client`.
@Suite struct StreamTLSTests {
    @Test func framesCrossATLSConnectionBothWays() async throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let cert = try pki.issue("server", commonName: "localhost", altNames: ["DNS:localhost"])
        let serverContext = try TLSContext(server: TLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
        let settings = StreamConnectionSettings(handshakeTimeout: 5)
        let h = try StreamHarness(settings: settings, security: { TLSStream(server: serverContext) }, echo: true)
        defer { h.stop() }
        let client = TLSClientSettings(caFile: pki.caFile, names: .https)
        let clientContext = try TLSContext(client: client)
        let port = h.port
        h.onLoop { h in
            let tls = TLSStream(client: clientContext, target: TLSTarget(serverName: "localhost", client: client))!
            let c = try! LineConnection.connect(to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                                                framer: LineFramer(), security: tls, settings: settings)
            h.watch(c, echo: false)
            c.start()
            // Held by TLS until the server's certificate and name checked out.
            c.send(Array("secret\n".utf8))
        }
        #expect(await eventually(timeout: 10) { h.seen.frames == ["secret", "secret"] })
        #expect(h.onLoop { $0.connections.allSatisfy { $0.security?.isEstablished == true } })
        #expect(h.seen.ends.isEmpty)
    }

    @Test func aClientThatDistrustsTheServerEndsWithTheSecurityFailure() async throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let other = try TestPKI(name: "other CA")
        defer { other.remove() }
        let cert = try pki.issue("server", commonName: "localhost", altNames: ["DNS:localhost"])
        let serverContext = try TLSContext(server: TLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
        let h = try StreamHarness(settings: StreamConnectionSettings(handshakeTimeout: 5), security: { TLSStream(server: serverContext) })
        defer { h.stop() }
        let client = TLSClientSettings(caFile: other.caFile, names: .https)
        let clientContext = try TLSContext(client: client)
        let port = h.port
        let failure = Mutex<TLSFailure?>(nil)
        h.onLoop { h in
            let tls = TLSStream(client: clientContext, target: TLSTarget(serverName: "localhost", client: client))!
            let c = try! LineConnection.connect(to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                                                framer: LineFramer(), security: tls, settings: StreamConnectionSettings())
            c.onClose = { _, why in
                if case .security(let error) = why { failure.withLock { $0 = error as? TLSFailure } }
            }
            c.start()
            h.retain(c)
        }
        #expect(await eventually(timeout: 10) { failure.withLock { $0 } == .unknownCA })
    }

    /// The server end against OpenSSL's own client.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func openSSLClientTalksToTheServerEnd() async throws {
        let pki = try TestPKI()
        defer { pki.remove() }
        let cert = try pki.issue("server", commonName: "localhost", altNames: ["DNS:localhost"])
        let serverContext = try TLSContext(server: TLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
        let h = try StreamHarness(settings: StreamConnectionSettings(handshakeTimeout: 10), security: { TLSStream(server: serverContext) },
                                  echo: true)
        defer { h.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_client", "-connect", "127.0.0.1:\(h.port)", "-servername", "localhost", "-CAfile", pki.caFile,
                             "-verify_return_error", "-quiet"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        input.fileHandleForWriting.write(Data("from openssl\n".utf8))
        #expect(await eventually(timeout: 10) { h.seen.frames == ["from openssl"] })
        // The echo comes back decrypted on s_client's stdout.
        let reply = Mutex<String>("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            reply.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        defer { output.fileHandleForReading.readabilityHandler = nil }
        #expect(await eventually(timeout: 10) { reply.withLock { $0 }.contains("from openssl") })
        try input.fileHandleForWriting.close()
    }
}
