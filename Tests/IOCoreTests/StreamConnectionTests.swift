import Glibc
import IOCore
import TestSupport
import Testing

extension IOCoreSuites {
    /// `StreamConnection` on real sockets on 127.0.0.1: framing across reads, framing errors,
    /// outbound connect, the bounded write queue.
    @Suite struct StreamConnectionTests {
        @Test func framesCutAcrossSplitReads() async throws {
            let h = try StreamHarness(echo: true)
            defer { h.stop() }
            let client = try Client(port: h.port)
            client.send("hel")
            // The first piece has been read on its own: the framer holds it.
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.first?.framer.pending } == 3 })
            client.send("lo\nwor")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["hello"] })
            client.send("ld\nand\nmore\n")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["hello", "world", "and", "more"] })
            // Echoed through the write path.
            var echoed = ""
            #expect(
                await eventually(timeout: 5) {
                    echoed += client.readNow() ?? ""
                    return echoed == "hello\nworld\nand\nmore\n"
                })
        }

        @Test func bytesTheFramerRefusesEndTheConnection() async throws {
            let h = try StreamHarness()
            defer { h.stop() }
            let client = try Client(port: h.port)
            client.send(String(repeating: "x", count: 100))
            #expect(await client.waitClosed(timeout: 5))
            #expect(await eventually(timeout: 5) { h.seen.ends == ["framing"] }, "\(h.seen.ends)")
        }

        @Test func thePeerClosingIsReported() async throws {
            let h = try StreamHarness()
            defer { h.stop() }
            var client: Client? = try Client(port: h.port)
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.count } == 1 })
            client = nil
            #expect(await eventually(timeout: 5) { h.seen.ends == ["closedByPeer"] })
            _ = client
        }

        @Test func anOutboundConnectionCarriesFramesBothWays() async throws {
            let server = try StreamHarness(echo: true)
            defer { server.stop() }
            let port = server.port
            await server.onLoop { h in
                let c = try! LineConnection.connect(
                    to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                    framer: LineFramer(), settings: StreamConnectionSettings())
                h.watch(c, echo: false)
                c.start()
                // Sent while connecting: queued until the connect completes.
                c.send(Array("over\n".utf8))
            }
            // The server side saw it and echoed it; the client side framed the echo.
            #expect(await eventually(timeout: 5) { server.seen.frames == ["over", "over"] })
            #expect(await server.onLoop { $0.connections.first { !$0.inbound }?.isConnecting } == false)
        }

        @Test func aRefusedConnectIsClassified() async throws {
            // A port nobody listens on: bound, then closed.
            let probe = try StreamListener(
                loop: try EventLoop(), bind: SocketAddress(host: "127.0.0.1", port: 0),
                caps: StreamConnectionCaps(maxConnections: 1, maxPerSource: 1))
            let port = probe.local.port
            probe.close()
            let h = try StreamHarness()
            defer { h.stop() }
            await h.onLoop { h in
                do throws(StreamFailure) {
                    let c = try LineConnection.connect(
                        to: SocketAddress(host: "127.0.0.1", port: port), loop: h.loop,
                        framer: LineFramer(), settings: StreamConnectionSettings())
                    h.watch(c, echo: false)
                    c.start()
                } catch {
                    h.seen.end(kind(error))
                }
            }
            #expect(await eventually(timeout: 5) { h.seen.ends == ["connect"] })
        }

        /// A peer that does not read: the queue grows to `maxQueuedBytes`, then the send that
        /// would pass it fails and the connection ends.
        @Test func aPeerThatDoesNotReadHitsTheWriteQueueBound() async throws {
            let h = try StreamHarness(settings: StreamConnectionSettings(maxQueuedBytes: 1 << 20))
            defer { h.stop() }
            let client = try Client(port: h.port, receiveBuffer: 4096)
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.count } == 1 })
            let chunk = [UInt8](repeating: 0x41, count: 65_536)
            let accepted = await h.onLoop { h -> Int in
                let c = h.connections[0]
                var sent = 0
                while c.send(chunk) { sent += 1 }
                return sent
            }
            // The kernel took some, the queue the rest up to the bound; then the bound held.
            #expect(accepted >= 16)
            #expect(await eventually(timeout: 5) { h.seen.ends == ["writeQueueFull"] }, "\(h.seen.ends)")
            _ = client
        }

        /// Back-pressure without failure: what the socket does not take waits in the queue and
        /// leaves as the peer reads.
        @Test func theQueueDrainsAsThePeerReads() async throws {
            let h = try StreamHarness(settings: StreamConnectionSettings(maxQueuedBytes: 64 << 20))
            defer { h.stop() }
            let client = try Client(port: h.port, receiveBuffer: 4096)
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.count } == 1 })
            // More than the kernel's send buffer can take at once (tcp_wmem's maximum is 4 MiB).
            let total = 32 << 20
            let queued = await h.onLoop { h -> Int in
                h.connections[0].send([UInt8](repeating: 0x42, count: total))
                return h.connections[0].queuedBytes
            }
            #expect(queued > 0)
            var read = 0
            var chunk = [UInt8](repeating: 0, count: 65_536)
            #expect(
                await eventually(timeout: 60) {
                    while true {
                        let n = recv(client.fd, &chunk, chunk.count, 0)
                        guard n > 0 else { break }
                        read += n
                    }
                    return read == total
                })
            #expect(await h.onLoop { $0.connections[0].queuedBytes } == 0)
            #expect(h.seen.ends.isEmpty)
        }
    }
}
