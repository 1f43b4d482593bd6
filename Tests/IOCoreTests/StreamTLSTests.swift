import Glibc
import IOCore
import Synchronization
import TLS
import TestSupport
import Testing

extension IOCoreSuites {
    /// TLS through the stream layer: `TLSStream` as the security layer of both ends (server and
    /// client connections on one loop, certificates from the test PKI).
    @Suite struct StreamTLSTests {
        /// A TLS server on a harness (a certificate for "localhost" from a fresh test PKI) and a
        /// client connection to it that trusts the PKI and sends `line` once connected. The
        /// PKI's files go when `body` returns.
        private func withTLSPair(
            echo: Bool, sending line: String, _ body: (StreamHarness<LineFramer>) async throws -> Void
        ) async throws {
            let pki = try await TestPKI()
            defer { pki.remove() }
            let cert = try await pki.issue("server", commonName: "localhost", altNames: ["DNS:localhost"])
            let serverContext = try TLSContext(
                server: TLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
            let settings = StreamConnectionSettings(handshakeTimeout: 5)
            let h = try StreamHarness(settings: settings, security: { TLSStream(server: serverContext) }, echo: echo)
            defer { h.stop() }
            let client = TLSClientSettings(caFile: pki.caFile, names: .https)
            let clientContext = try TLSContext(client: client)
            let port = h.port
            await h.onLoop { h in
                let tls = TLSStream(client: clientContext, target: TLSTarget(serverName: "localhost", client: client))!
                let c = try! LineConnection.connect(
                    to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                    framer: LineFramer(), security: tls, settings: settings)
                h.watch(c, echo: false)
                c.start()
                // Held by TLS until the server's certificate and name checked out.
                c.send(Array((line + "\n").utf8))
            }
            try await body(h)
        }

        @Test func framesCrossATLSConnectionBothWays() async throws {
            try await withTLSPair(echo: true, sending: "secret") { h in
                #expect(await eventually(timeout: 10) { h.seen.frames == ["secret", "secret"] })
                #expect(await h.onLoop { $0.connections.allSatisfy { $0.security?.isEstablished == true } })
                #expect(h.seen.ends.isEmpty)
            }
        }

        /// The server's last data and its close_notify come in one read: the data is
        /// delivered before the connection ends (it was lost when the close was handled first).
        @Test func theLastDataBeforeACloseNotifyIsDelivered() async throws {
            try await withTLSPair(echo: false, sending: "hello") { h in
                #expect(await eventually(timeout: 10) { h.seen.frames == ["hello"] })
                // The accepted connection is the second watched: its answer and its close go
                // out in one loop turn, before the client reads.
                await h.onLoop { h in
                    let server = h.connections[1]
                    server.send(Array("last\n".utf8))
                    server.finishWriting()
                }
                #expect(await eventually(timeout: 10) { h.seen.frames == ["hello", "last"] }, "\(h.seen.frames)")
                #expect(await eventually(timeout: 10) { !h.seen.ends.isEmpty }, "the client did not end")
            }
        }

        @Test func aClientThatDistrustsTheServerEndsWithTheSecurityFailure() async throws {
            let pki = try await TestPKI()
            defer { pki.remove() }
            let other = try await TestPKI(name: "other CA")
            defer { other.remove() }
            let cert = try await pki.issue("server", commonName: "localhost", altNames: ["DNS:localhost"])
            let serverContext = try TLSContext(
                server: TLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
            let h = try StreamHarness(
                settings: StreamConnectionSettings(handshakeTimeout: 5), security: { TLSStream(server: serverContext) })
            defer { h.stop() }
            let client = TLSClientSettings(caFile: other.caFile, names: .https)
            let clientContext = try TLSContext(client: client)
            let port = h.port
            let failure = Mutex<TLSFailure?>(nil)
            await h.onLoop { h in
                let tls = TLSStream(client: clientContext, target: TLSTarget(serverName: "localhost", client: client))!
                let c = try! LineConnection.connect(
                    to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                    framer: LineFramer(), security: tls, settings: StreamConnectionSettings())
                c.onClose = { _, why in
                    if case .security(let error) = why { failure.withLock { $0 = error as? TLSFailure } }
                }
                c.start()
                h.retain(c)
            }
            #expect(await eventually(timeout: 10) { failure.withLock { $0 } == .unknownCA })
        }
    }
}
