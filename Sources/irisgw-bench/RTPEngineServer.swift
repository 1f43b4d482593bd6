import Foundation
import Glibc
import IOCore

/// Debian's rtpengine (`rtpengine-daemon`), userspace only (`--table=-1`), one worker thread,
/// run by the bench itself on CPU 0 like irisgw (`LineChild.pinned`; never as the Debian service), driven over the
/// ng control protocol. A small `sh` stays between the bench and rtpengine: when its stdin
/// closes (the bench stopped it, or the bench died) it stops rtpengine.
final class RTPEngineServer: MediaServerUnderTest {
    static let binary = "/usr/bin/rtpengine"
    /// Below the ephemeral ports, apart from irisgw's (`MediaServer.portRange`).
    static let portMin = 22_000, portMax = 31_999
    let name = "rtpengine"
    private let wrapper: LineChild
    private let ng: NGClient
    let pid: Int32
    let version: String
    let logPath: String
    let arguments: [String]
    private var opened: [(callID: String, fromTag: String)] = []
    private var session = 0

    /// The codec rtpengine is told to transcode the platform side to: Opus at 48 kHz, mono,
    /// 32 kb/s (`encoding/clock/channels/bitrate`). Told `opus/48000/2` (what browsers' SDP
    /// says), rtpengine 10.5 encodes two channels.
    static let opusCodec = "opus/48000/1/32000"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw Unavailable(
                description: "rtpengine not installed (make bench installs rtpengine-daemon; it failed or was not root)"
            )
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: Self.binary)
        probe.arguments = ["--version"]
        let out = Pipe()
        probe.standardOutput = out
        probe.standardError = out
        try probe.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        version =
            text.split(separator: "\n").first(where: { $0.contains("Version") }).map {
                String($0.split(separator: " ").last ?? "")
            } ?? "unknown"

        // An ng port from the OS (bound, read, released).
        let ngPort = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0)).local.port
        arguments = [
            "--config-file=none", "--foreground", "--table=-1", "--interface=127.0.0.1",
            "--listen-ng=127.0.0.1:\(ngPort)", "--port-min=\(Self.portMin)", "--port-max=\(Self.portMax)",
            "--num-threads=1", "--log-stderr", "--log-level=4", "--delete-delay=0", "--timeout=60"
        ]
        logPath =
            FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-rtpengine-\(getpid()).log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        let script = """
            "$@" >/dev/null </dev/null & p=$!; echo "pid $p"; cat >/dev/null; kill -TERM $p 2>/dev/null; \
            i=0; while kill -0 $p 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL $p 2>/dev/null; wait $p
            """
        wrapper = try LineChild(
            "/bin/sh", ["-c", script, "sh"] + LineChild.pinned(cpu: 0, [Self.binary] + arguments),
            label: "rtpengine", stderr: log)
        let line = try wrapper.readLine(timeout: 10)
        guard line.hasPrefix("pid "), let p = Int32(line.dropFirst(4)) else {
            throw Unavailable(description: "rtpengine wrapper said \(line)")
        }
        pid = p
        ng = try NGClient(server: SocketAddress(host: "127.0.0.1", port: ngPort))
        // Up when it answers ping.
        let deadline = EventLoop.now() + 15
        while true {
            if (try? ng.request("ping", timeout: 0.3, attempts: 1))?["result"]?.stringValue == "pong" { break }
            guard EventLoop.now() < deadline, kill(pid, 0) == 0 else {
                wrapper.stop()
                throw Unavailable(description: "rtpengine did not start: \(lastLog())")
            }
        }
    }

    /// The end of rtpengine's log (stderr), one line.
    func lastLog() -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(2).joined(separator: " | ").replacingOccurrences(of: "\"", with: "'")
    }

    /// Per call: an offer from the trunk side (PCMU at the generator's trunk socket; for
    /// transcoding with `codec: {transcode: [opus], mask: [PCMU]}` so the platform side is
    /// offered Opus only and PCMU is still accepted from the trunk), then the platform side's
    /// answer (Opus, or PCMU, at the generator's platform socket). The offer's reply says
    /// where the platform side sends; the answer's, where the trunk side sends.
    func open(_ mode: LoadMode, generator: [(Int, Int)]) throws -> [CallTarget] {
        session += 1
        var targets: [CallTarget] = []
        for (i, ports) in generator.enumerated() {
            let callID = "irisgw-bench-\(getpid())-\(session)-\(i)"
            var offer: [String: Bencode] = [
                "call-id": .string(callID), "from-tag": .string("trunk-\(i)"),
                "sdp": .string(BenchSDP.audio(port: ports.0, payloadType: 0, rtpmap: "PCMU/8000", session: 2 * i + 1))
            ]
            if mode == .transcode {
                offer["codec"] = .dict(["transcode": .list([.string(Self.opusCodec)]), "mask": .list([.string("PCMU")])]
                )
            }
            let offered = try ng.request("offer", offer)
            opened.append((callID, "trunk-\(i)"))
            guard let offerSDP = offered["sdp"]?.stringValue, let toPlatform = BenchSDP.audioStream(offerSDP) else {
                throw Unavailable(description: "rtpengine offer without SDP: \(offered)")
            }
            let pt: UInt8
            let answerSDP: String
            if mode == .transcode {
                guard let opus = BenchSDP.payloadType(of: "opus", in: offerSDP) else {
                    throw Unavailable(
                        description:
                            "rtpengine offered no Opus to transcode to: \(offerSDP.replacingOccurrences(of: "\r\n", with: " "))"
                    )
                }
                pt = opus
                answerSDP = BenchSDP.audio(
                    port: ports.1, payloadType: pt, rtpmap: "opus/48000/1", fmtp: "useinbandfec=1", session: 2 * i + 2)
            } else {
                pt = 0
                answerSDP = BenchSDP.audio(port: ports.1, payloadType: 0, rtpmap: "PCMU/8000", session: 2 * i + 2)
            }
            let answered = try ng.request(
                "answer",
                [
                    "call-id": .string(callID), "from-tag": .string("trunk-\(i)"), "to-tag": .string("platform-\(i)"),
                    "sdp": .string(answerSDP)
                ])
            guard let toTrunk = answered["sdp"]?.stringValue.flatMap(BenchSDP.audioStream) else {
                throw Unavailable(description: "rtpengine answer without SDP")
            }
            if mode == .relay && toTrunk.payloadTypes.first != 0 {
                throw Unavailable(description: "rtpengine answered \(toTrunk.payloadTypes) for PCMU")
            }
            targets.append(CallTarget(trunk: toTrunk.port, platform: toPlatform.port, payloadType: pt))
        }
        return targets
    }

    func closeAll() throws -> String {
        defer { opened.removeAll() }
        for c in opened {
            _ = try? ng.request("delete", ["call-id": .string(c.callID), "from-tag": .string(c.fromTag)])
        }
        return ""
    }

    func stop() {
        try? closeAll()
        wrapper.stop(timeout: 10)
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
