import Glibc
import IOCore
import TLS
import TestSupport
import Testing

extension IOCoreSuites {
    /// Each deadline of `StreamConnection`, short, firing on the loop's timer: the test waits
    /// for the connection to end and checks why.
    @Suite struct StreamDeadlineTests {
        struct Case: Sendable, CustomStringConvertible {
            var description: String
            var settings: StreamConnectionSettings
            /// What the client sends after connecting.
            var says: String
            var expected: String
        }

        static let cases: [Case] = [
            Case(description: "idle", settings: StreamConnectionSettings(idleTimeout: 0.2), says: "", expected: "idle"),
            Case(
                description: "first frame, nothing sent", settings: StreamConnectionSettings(firstFrameTimeout: 0.2),
                says: "",
                expected: "firstFrameTimeout"),
            Case(
                description: "first frame, half of one sent",
                settings: StreamConnectionSettings(firstFrameTimeout: 0.2),
                says: "hal", expected: "firstFrameTimeout"),
            Case(
                description: "frame", settings: StreamConnectionSettings(frameTimeout: 0.2), says: "whole\nhal",
                expected: "frameTimeout")
        ]

        @Test(arguments: cases) func aDeadlineEndsTheConnection(_ c: Case) async throws {
            let h = try StreamHarness(settings: c.settings)
            defer { h.stop() }
            let client = try Client(port: h.port)
            if !c.says.isEmpty { client.send(c.says) }
            #expect(await client.waitClosed(timeout: 5))
            #expect(await eventually(timeout: 5) { h.seen.ends == [c.expected] }, "\(h.seen.ends)")
        }

        /// Frames that keep arriving whole keep the connection: the frame deadline runs only while
        /// one is incomplete, and activity moves the idle one.
        @Test func wholeFramesKeepTheConnection() async throws {
            let h = try StreamHarness(
                settings: StreamConnectionSettings(idleTimeout: 2, firstFrameTimeout: 2, frameTimeout: 2))
            defer { h.stop() }
            let client = try Client(port: h.port)
            for i in 0..<5 {
                client.send("line \(i)\n")
                #expect(await eventually(timeout: 5) { h.seen.frames.count == i + 1 })
            }
            #expect(h.seen.ends.isEmpty)
        }

        /// A TLS server whose client never says hello: the handshake deadline ends it.
        @Test func theHandshakeDeadline() async throws {
            let pki = try await TestPKI()
            defer { pki.remove() }
            let cert = try await pki.issue("server", commonName: "localhost", altNames: ["DNS:localhost"])
            let context = try TLSContext(
                server: TLSServerSettings(certificateFile: cert.certificate, keyFile: cert.key))
            let h = try StreamHarness(
                settings: StreamConnectionSettings(handshakeTimeout: 0.2), security: { TLSStream(server: context) })
            defer { h.stop() }
            let client = try Client(port: h.port)
            #expect(await client.waitClosed(timeout: 5))
            #expect(await eventually(timeout: 5) { h.seen.ends == ["handshakeTimeout"] }, "\(h.seen.ends)")
        }

        /// A quiet connection of ours asks for a keep-alive; a peer that answers nothing ends it.
        @Test func theKeepaliveAndItsTimeout() async throws {
            let peer = try StreamHarness()
            defer { peer.stop() }
            let port = peer.port
            let ours = try StreamHarness()
            defer { ours.stop() }
            await ours.onLoop { h in
                let c = try! LineConnection.connect(
                    to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                    framer: LineFramer(),
                    settings: StreamConnectionSettings(keepaliveInterval: 0.2, keepaliveTimeout: 0.3))
                h.watch(c, echo: false)
                c.start()
            }
            #expect(await eventually(timeout: 5) { ours.seen.ends == ["keepaliveTimeout"] })
            #expect(ours.seen.keepalives == 1)
        }
    }
}
