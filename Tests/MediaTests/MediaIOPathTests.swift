import Foundation
import Glibc
import IOCore
import TestSupport
import Testing

@testable import Media

/// The media threads' two I/O paths (docs/media.md, "Batched I/O"): io_uring batches and the
/// epoll fallback, each forced by `MediaEngineConfiguration.io`, carry relayed and
/// transcoded calls, release a call's sockets when it ends, and keep every call's packets
/// apart when many share a thread.
struct MediaIOPathTests {
    static let paths: [MediaIOMode] = [.uring, .epoll]

    /// 20 ms of a 1 kHz tone in µ-law.
    static let tone: [UInt8] = {
        var bytes = [UInt8](repeating: 0, count: 160)
        G711.encodeULaw(sine(1000, sampleRate: 8000, count: 160, offset: 0), into: &bytes)
        return bytes
    }()

    static func engine(_ io: MediaIOMode, ports: Int = 40) throws -> MediaEngine {
        try MediaEngine(
            configuration: .init(threads: 1, portRange: try freePortRange(count: ports), portQuarantine: 0, io: io))
    }

    /// `count` PCMU packets from `from` into `leg` of `call`, paced 20 ms apart.
    static func sendTone(_ count: Int, from peer: RTPTestPeer, to address: SocketAddress) async {
        await paced(count) { _ in
            peer.send(payloadType: 0, payload: tone, to: address)
            peer.timestamp &+= 160
        }
    }

    @Test(arguments: paths)
    func engineUsesTheForcedPath(_ io: MediaIOMode) throws {
        let engine = try Self.engine(io)
        defer { engine.shutdown() }
        #expect(engine.io == io)
        #expect(engine.ioFallbackReason == nil)
    }

    @Test func automaticTakesTheRingWhenTheKernelHasOne() throws {
        let engine = try Self.engine(.automatic)
        defer { engine.shutdown() }
        // This kernel has io_uring; a fallback must say why.
        #expect(engine.io == .uring || engine.ioFallbackReason != nil)
        #expect(engine.io != .automatic)
    }

    @Test(arguments: paths)
    func relayedCallCarriesBothDirections(_ io: MediaIOMode) async throws {
        let engine = try Self.engine(io)
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .pcmu, payloadType: 0, remote: app.address)))
        defer { call.close() }
        async let up: Void = Self.sendTone(25, from: carrier, to: call.trunkAddress)
        async let down: Void = Self.sendTone(25, from: app, to: call.platformAddress)
        _ = await (up, down)
        let arrived = await eventually(timeout: 5) {
            carrier.drain()
            app.drain()
            return carrier.packets(payloadType: 0).count == 25 && app.packets(payloadType: 0).count == 25
        }
        #expect(
            arrived, "app got \(app.packets(payloadType: 0).count), carrier \(carrier.packets(payloadType: 0).count)")
        // Relayed with our SSRC and the payload untouched.
        let relayed = app.packets(payloadType: 0)
        #expect(Set(relayed.map(\.ssrc)).count == 1 && relayed.first?.ssrc != carrier.ssrc)
        #expect(relayed.first?.payload == Self.tone)
        let stats = call.statistics()
        #expect(stats[.trunk]?.packetsReceived == 25 && stats[.platform]?.packetsSent == 25)
        #expect(stats[.platform]?.packetsReceived == 25 && stats[.trunk]?.packetsSent == 25)
    }

    @Test(arguments: paths)
    func transcodedCallCarriesATone(_ io: MediaIOMode) async throws {
        let engine = try Self.engine(io)
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.address)))
        defer { call.close() }
        await Self.sendTone(50, from: carrier, to: call.trunkAddress)
        let arrived = await eventually(timeout: 5) {
            app.drain()
            return app.packets(payloadType: 111).count >= 40
        }
        #expect(arrived, "app got \(app.packets(payloadType: 111).count) Opus packets")
        let decoder = try TestCodec(.opus(.init()), sampleRate: 8000)
        let pcm = app.packets(payloadType: 111).dropFirst(10).flatMap { decoder.decode($0.payload) }
        let tone = Goertzel(frequency: 1000, sampleRate: 8000).power(pcm)
        for other in [500.0, 1400, 2000] {
            #expect(tone > 20 * Goertzel(frequency: other, sampleRate: 8000).power(pcm), "1 kHz against \(other) Hz")
        }
    }

    /// The sockets bound to `ports` on 127.0.0.1, as /proc/net/udp lists them (their inodes).
    static func socketInodes(ports: Set<Int>) -> Set<String> {
        // Read to the end: a /proc file says its size is 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/udp"), let data = try? handle.readToEnd() else {
            return []
        }
        try? handle.close()
        let table = String(decoding: data, as: UTF8.self)
        var inodes = Set<String>()
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, let colon = fields[1].lastIndex(of: ":"),
                let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16), ports.contains(port)
            else { continue }
            inodes.insert(String(fields[9]))
        }
        return inodes
    }

    /// The socket inodes among this process's open descriptors.
    static func openSocketInodes() -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(
            fds.compactMap { fd in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
    }

    @Test(arguments: paths)
    func callEndReleasesItsSockets(_ io: MediaIOMode) async throws {
        let engine = try Self.engine(io)
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .pcmu, payloadType: 0, remote: app.address)))
        // Traffic first, so the receives have run and buffers are in use.
        await Self.sendTone(5, from: carrier, to: call.trunkAddress)
        #expect(await eventually(timeout: 5) { call.statistics()[.trunk]?.packetsReceived == 5 })
        let ports = Set([call.trunkAddress.port, call.platformAddress.port].flatMap { [$0, $0 + 1] })
        let inodes = Self.socketInodes(ports: ports)
        #expect(inodes.count == 4)
        #expect(inodes.isSubset(of: Self.openSocketInodes()), "the call's sockets are this process's descriptors")
        call.close()
        // Closed: no descriptor of ours is one of its sockets, and the kernel has let go of
        // them (a receive left armed would keep a socket bound with no descriptor).
        let released = await eventually(timeout: 5) {
            Self.openSocketInodes().isDisjoint(with: inodes) && Self.socketInodes(ports: ports).isEmpty
        }
        #expect(released)
        // The ports bind again at once.
        for port in ports {
            #expect(throws: Never.self) { _ = try UDPSocket(bind: .init(host: "127.0.0.1", port: port)) }
        }
    }

    /// `count` PCMU relay calls, each between a carrier peer and an app peer of its own.
    static func relayCalls(_ count: Int, on engine: MediaEngine) throws -> [(RTPTestPeer, RTPTestPeer, MediaCall)] {
        try (0..<count).map { _ in
            let carrier = try RTPTestPeer(), app = try RTPTestPeer()
            let call = try engine.openCall(
                MediaCallConfiguration(
                    trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                    platform: .init(codec: .pcmu, payloadType: 0, remote: app.address)))
            return (carrier, app, call)
        }
    }

    @Test(arguments: paths)
    func manyCallsOnOneThreadAllGetTheirPackets(_ io: MediaIOMode) async throws {
        let calls = 40
        let engine = try Self.engine(io, ports: 4 * calls + 40)
        defer { engine.shutdown() }
        let peers = try MediaIOPathTests.relayCalls(calls, on: engine)
        defer { for (_, _, call) in peers { call.close() } }
        let sent = 20
        nonisolated(unsafe) let all = peers
        // Every call's carrier sends in the same 20 ms steps: one wake finds many sockets ready.
        await paced(sent) { _ in
            for (carrier, _, call) in all {
                carrier.send(payloadType: 0, payload: Self.tone, to: call.trunkAddress)
                carrier.timestamp &+= 160
            }
        }
        let arrived = await eventually(timeout: 10) {
            all.allSatisfy { _, app, _ in
                app.drain()
                return app.packets(payloadType: 0).count == sent
            }
        }
        #expect(arrived)
        for (carrier, app, call) in peers {
            // Each app got its own call's packets: relayed under that call's SSRC, in order.
            let got = app.packets(payloadType: 0)
            #expect(got.count == sent)
            #expect(Set(got.map(\.ssrc)).count == 1 && got.first?.ssrc != carrier.ssrc)
            #expect(zip(got, got.dropFirst()).allSatisfy { $1.sequenceNumber == $0.sequenceNumber &+ 1 })
            #expect(call.statistics()[.trunk]?.packetsReceived == sent)
        }
    }
}

/// A media thread held up while many of its sockets fill: at its next wait the ring hands
/// over every datagram the sockets held, thousands across calls in a few waits, none lost.
struct MediaRingBacklogTests {
    @Test func aHeldUpThreadLosesNothingItsSocketsHeld() async throws {
        let calls = 24, burst = 120  // 2880 datagrams waiting, against 2048 buffers
        let engine = try MediaIOPathTests.engine(.uring, ports: 4 * calls + 40)
        defer { engine.shutdown() }
        let peers = try MediaIOPathTests.relayCalls(calls, on: engine)
        defer { for (_, _, call) in peers { call.close() } }
        let thread = engine.threads[0]
        // Hold the media thread up (on its own loop) until every burst is in its sockets.
        let release = DispatchSemaphore(value: 0)
        thread.loop.execute { release.wait() }
        for (carrier, _, call) in peers {
            for _ in 0..<burst {
                carrier.send(payloadType: 0, payload: MediaIOPathTests.tone, to: call.trunkAddress)
                carrier.timestamp &+= 160
            }
        }
        release.signal()
        nonisolated(unsafe) let all = peers
        let arrived = await eventually(timeout: 10) {
            all.allSatisfy { _, app, _ in
                app.drain()
                return app.packets(payloadType: 0).count == burst
            }
        }
        #expect(arrived, "\(all.map { $0.1.packets(payloadType: 0).count })")
        let stats = thread.loop.sync { thread.ringStatistics }
        #expect(stats?.received ?? 0 >= calls * burst)
    }
}
