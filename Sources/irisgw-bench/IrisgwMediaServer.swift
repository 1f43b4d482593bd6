import Foundation
import Glibc
import IOCore

/// irisgw's media engine in `irisgw-bench media-server`, on CPU 0 (`LineChild.pinned`).
final class IrisgwMediaServer: MediaServerUnderTest {
    let name = "irisgw"
    private let child: LineChild
    var pid: Int32 { child.pid }

    /// The platform leg's Opus: `complexity`, `bitrate` (nil: libopus's own) and the encoder's
    /// rate (nil: the call's 8 kHz; 48000: rtpengine's, fullband, through the engine's upsampler).
    /// `budget`: admission at this load budget, per cent (refused calls get no media).
    init(binary: String, complexity: Int32, bitrate: Int? = nil, opusRate: Int? = nil, budget: Int? = nil) throws {
        var args = [binary, "media-server", "--complexity", "\(complexity)"]
        if let bitrate { args += ["--bitrate", "\(bitrate)"] }
        if let opusRate { args += ["--opus-rate", "\(opusRate)"] }
        if let budget { args += ["--budget", "\(budget)"] }
        child = try LineChild(pinnedTo: 0, args, label: "media-server")
        let hello = try child.readLine(timeout: 20)
        guard hello == "ready" else { throw LineChild.Failure(description: "media-server said \(hello)") }
    }

    func open(_ mode: LoadMode, generator: [(Int, Int)]) throws -> [CallTarget] {
        child.send("open \(mode.rawValue) " + generator.map { "\($0.0),\($0.1)" }.joined(separator: " "))
        let line = try child.readLine(timeout: 120)
        guard line.hasPrefix("ok") else { throw LineChild.Failure(description: "media-server: \(line)") }
        return line.split(separator: " ").dropFirst().compactMap { item in
            let v = item.split(separator: ",").compactMap { Int($0) }
            return v.count == 3
                ? CallTarget(trunk: v[0], platform: v[1], payloadType: UInt8(truncatingIfNeeded: v[2])) : nil
        }
    }

    func closeAll() throws -> String {
        child.send("close")
        let line = try child.readLine(timeout: 60)
        guard line.hasPrefix("ok") else { throw LineChild.Failure(description: "media-server: \(line)") }
        return String(line.dropFirst(3))
    }

    func stop() {
        child.send("quit")
        child.stop()
    }
}
