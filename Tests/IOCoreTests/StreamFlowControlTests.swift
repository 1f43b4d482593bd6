import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing

/// Lines, one at a time: after a line the framer holds what follows until `release()` (as
/// the control API's HTTP framer holds a pipelined request behind the one being answered).
struct OneLineFramer: StreamFramer {
    private var buffer: [UInt8] = []
    private var held = false

    var pending: Int { held ? 0 : buffer.count }

    mutating func release() { held = false }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Never) -> [String] {
        buffer.append(contentsOf: bytes)
        guard !held, let nl = buffer.firstIndex(of: 0x0A) else { return [] }
        let line = String(decoding: buffer[..<nl], as: UTF8.self)
        buffer.removeFirst(nl + 1)
        held = true
        return [line]
    }
}

/// Lines until "UPGRADE" (then it stops and holds the rest), and after the swap fixed
/// three-byte chunks: a framer whose state changes with the protocol, as HTTP's 101 does.
enum SwitchFramer: StreamFramer {
    case lines([UInt8], upgraded: Bool)
    case chunks([UInt8])

    var pending: Int {
        switch self {
        case .lines(let b, _), .chunks(let b): b.count
        }
    }

    var held: [UInt8] {
        if case .lines(let b, true) = self { return b }
        return []
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Never) -> [String] {
        switch self {
        case .lines(var b, let upgraded):
            b.append(contentsOf: bytes)
            var frames: [String] = []
            var done = upgraded
            while !done, let nl = b.firstIndex(of: 0x0A) {
                let line = String(decoding: b[..<nl], as: UTF8.self)
                b.removeFirst(nl + 1)
                frames.append(line)
                done = line == "UPGRADE"
            }
            self = .lines(b, upgraded: done)
            return frames
        case .chunks(var b):
            b.append(contentsOf: bytes)
            var frames: [String] = []
            while b.count >= 3 {
                frames.append(String(decoding: b.prefix(3), as: UTF8.self))
                b.removeFirst(3)
            }
            self = .chunks(b)
            return frames
        }
    }
}

extension IOCoreSuites {
    /// What the control API needs of a connection: back-pressure (`pauseReading`,
    /// `resumeReading` with what the framer held back), a framer swap that keeps the bytes
    /// the old framer held, and word when a full queue has drained. Real sockets on 127.0.0.1.
    @Suite struct StreamFlowControlTests {
        @Test func pausedReadingStallsThePeerAndResumingDeliversEverything() async throws {
            let h = try StreamHarness()
            defer { h.stop() }
            let client = try Client(port: h.port)
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.count } == 1 })
            await h.onLoop { $0.connections[0].pauseReading() }
            // Nothing is read: the kernel's buffers fill and the peer's sending stops.
            let lines = [UInt8](repeating: 0x70, count: 5_000).enumerated().map {
                $0.offset % 50 == 49 ? 0x0A : $0.element
            }
            var sent = 0
            #expect(
                await eventually(timeout: 30) {
                    while true {
                        let from = sent % lines.count
                        let n = lines.withUnsafeBytes {
                            Glibc.send(client.fd, $0.baseAddress! + from, $0.count - from, Int32(MSG_NOSIGNAL))
                        }
                        if n > 0 { sent += n; continue }
                        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                    }
                })
            #expect(sent > 0)
            #expect(h.seen.frames.isEmpty)
            #expect(await h.onLoop { $0.connections[0].isReadingPaused })
            await h.onLoop { $0.connections[0].resumeReading() }
            // The last line finished once the connection reads again.
            #expect(
                await eventually(timeout: 30) {
                    while sent % 50 != 0 {
                        let from = sent % lines.count
                        let n = lines.withUnsafeBytes {
                            Glibc.send(client.fd, $0.baseAddress! + from, 50 - sent % 50, Int32(MSG_NOSIGNAL))
                        }
                        guard n > 0 else { return false }
                        sent += n
                    }
                    return h.seen.frames.count == sent / 50
                })
            #expect(h.seen.ends.isEmpty)
        }

        @Test func resumingReoffersWhatTheFramerHeldBack() async throws {
            let h = try StreamHarness(framer: { OneLineFramer() }, onFrame: { c, _ in c.pauseReading() })
            defer { h.stop() }
            let client = try Client(port: h.port)
            // Three lines in one write: the framer cuts the first and holds the others.
            client.send("a\nb\nc\n")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["a"] })
            #expect(await h.onLoop { $0.connections[0].framer.pending } == 0)
            for expected in [["a", "b"], ["a", "b", "c"]] {
                await h.onLoop { h in
                    h.connections[0].framer.release()
                    h.connections[0].resumeReading()
                }
                #expect(await eventually(timeout: 5) { h.seen.frames == expected })
            }
            // And after the held lines, bytes read from the socket again.
            await h.onLoop { h in
                h.connections[0].framer.release()
                h.connections[0].resumeReading()
            }
            client.send("d\n")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["a", "b", "c", "d"] })
        }

        @Test func aSwappedFramerGetsTheBytesTheOldOneHeld() async throws {
            let h = try StreamHarness(
                framer: { SwitchFramer.lines([], upgraded: false) },
                onFrame: { c, frame in
                    guard frame == "UPGRADE" else { return }
                    c.replaceFramer(with: .chunks([]), replaying: c.framer.held)
                })
            defer { h.stop() }
            let client = try Client(port: h.port)
            // The first bytes of the new protocol come in the same write as the upgrade.
            client.send("hello\nUPGRADE\nabcdefgh")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["hello", "UPGRADE", "abc", "def"] })
            #expect(await h.onLoop { $0.connections[0].framer.pending } == 2)
            client.send("ijkl")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["hello", "UPGRADE", "abc", "def", "ghi", "jkl"] })
            #expect(h.seen.ends.isEmpty)
        }

        @Test func aDrainedQueueIsReportedAndFinishWritingSendsAFin() async throws {
            let h = try StreamHarness(settings: StreamConnectionSettings(maxQueuedBytes: 64 << 20))
            defer { h.stop() }
            let client = try Client(port: h.port, receiveBuffer: 4096)
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.count } == 1 })
            let drained = Mutex(0)
            let total = 16 << 20
            let queued = await h.onLoop { h -> Int in
                let c = h.connections[0]
                c.onDrained = { c in
                    drained.withLock { $0 += 1 }
                    c.finishWriting()
                }
                c.send([UInt8](repeating: 0x43, count: total))
                return c.queuedBytes
            }
            #expect(queued > 0)
            var read = 0
            var chunk = [UInt8](repeating: 0, count: 65_536)
            var sawEnd = false
            #expect(
                await eventually(timeout: 60) {
                    while true {
                        let n = recv(client.fd, &chunk, chunk.count, 0)
                        if n == 0 { sawEnd = true }
                        guard n > 0 else { break }
                        read += n
                    }
                    return sawEnd
                })
            #expect(read == total)
            #expect(drained.withLock { $0 } == 1)
            // Our FIN, not a close: the connection still reads.
            client.send("after\n")
            #expect(await eventually(timeout: 5) { h.seen.frames == ["after"] })
            #expect(h.seen.ends.isEmpty)
        }

        /// The control API resets what its caps refuse (no TIME_WAIT for a connection never
        /// served); by default a refused peer gets a FIN.
        @Test(arguments: [true, false]) func refusedConnectionsAreResetWhenAsked(reset: Bool) async throws {
            let h = try StreamHarness(maxConnections: 1)
            defer { h.stop() }
            await h.onLoop { $0.listener?.resetRefused = reset }
            let held = try Client(port: h.port)
            #expect(await eventually(timeout: 5) { await h.onLoop { $0.connections.count } == 1 })
            let refused = try Client(port: h.port)
            var ending: Int32 = -1
            #expect(
                await eventually(timeout: 5) {
                    var byte: UInt8 = 0
                    let n = recv(refused.fd, &byte, 1, 0)
                    if n == 0 { ending = 0 } else if n < 0, errno != EAGAIN, errno != EWOULDBLOCK { ending = errno }
                    return ending != -1
                })
            #expect(ending == (reset ? ECONNRESET : 0))
            #expect(h.seen.refusals == [.tooManyConnections])
            _ = held
        }
    }
}
