import Foundation
import TestSupport
import Testing

@testable import Media

/// opus-tools (Debian `opus-tools`): opusinfo reads a stream and checks its pages, opusdec
/// decodes it with libopusfile.
enum OpusTools {
    static let isInstalled = ["/usr/bin/opusinfo", "/usr/bin/opusdec"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}

/// The Ogg Opus files decoded by a real peer, opus-tools.
@Suite(.enabled(if: OpusTools.isInstalled, "needs opus-tools (/usr/bin/opusinfo, /usr/bin/opusdec)"))
struct RecordingOggTests {
    /// `opusdec --rate` to a WAV beside `path`.
    private static func decode(_ path: String, rate: Int) async throws -> WAVFile {
        let out = path + ".decoded.wav"
        let run = try await ChildProcess.run(
            "/usr/bin/opusdec", ["--quiet", "--no-dither", "--rate", String(rate), path, out])
        #expect(run.status == 0, "\(run.output)")
        return try WAVFile(contentsOf: out)
    }

    /// What opusinfo says of `path`; it exits 1 after any warning, which only a stream
    /// without its end (`complete: false`) may give, and only that one.
    private static func info(_ path: String, complete: Bool = true) async throws -> String {
        let run = try await ChildProcess.run("/usr/bin/opusinfo", [path])
        let warnings = run.output.split(separator: "\n").filter { $0.contains("WARNING") }
        if complete {
            #expect(run.status == 0 && warnings.isEmpty, "\(run.output)")
        } else {
            #expect(warnings.count == 1 && warnings[0].contains("EOS not set"), "\(run.output)")
        }
        return run.output
    }

    @Test(arguments: [
        (CallRecordingConfiguration.Layout.stereo, 8_000), (.stereo, 16_000), (.mixed, 8_000), (.mixed, 16_000)
    ])
    func opusToolsDecodeTheTones(layout: CallRecordingConfiguration.Layout, sampleRate: Int) async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.opus")
        let writer = try CallRecordingWriter(
            path: path, configuration: .init(format: .ogg, layout: layout, sampleRate: sampleRate))
        appendTones(writer, frames: 0..<150)
        let summary = try await writer.finish()
        #expect(summary.duration == 3 && summary.bytes == snapshot(path).count)
        #expect(fileMode(path) == 0o600)

        let info = try await Self.info(path)
        #expect(info.contains("Channels: \(layout.channels)"), "\(info)")
        #expect(info.contains("Original sample rate: \(sampleRate) Hz"), "\(info)")
        #expect(info.contains("Playback length: 0m:03.000s"), "\(info)")

        let wav = try await Self.decode(path, rate: sampleRate)
        try #require(wav.channels.count == layout.channels)
        #expect(wav.channels[0].count == 3 * sampleRate)
        // Past the codec's first moments: whole seconds of steady tone.
        let steady = sampleRate / 2..<(sampleRate * 5 / 2)
        if layout == .stereo {
            let (left, right) = (wav.channels[0][steady], wav.channels[1][steady])
            #expect(toneLevel(left, 440, sampleRate: sampleRate) > 5_000)
            #expect(toneLevel(right, 1000, sampleRate: sampleRate) > 5_000)
            // Each side stays on its channel: what leaks across is 30 dB down or more.
            #expect(toneLevel(left, 1000, sampleRate: sampleRate) < 250)
            #expect(toneLevel(right, 440, sampleRate: sampleRate) < 250)
        } else {
            #expect(toneLevel(wav.channels[0][steady], 440, sampleRate: sampleRate) > 5_000)
            #expect(toneLevel(wav.channels[0][steady], 1000, sampleRate: sampleRate) > 5_000)
        }
    }

    @Test func pausedStretchDecodesAsSilence() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.opus")
        let writer = try CallRecordingWriter(path: path, configuration: .init(format: .ogg, layout: .mixed))
        appendTones(writer, frames: 0..<50)
        writer.pause()
        appendTones(writer, frames: 50..<100)
        writer.resume()
        appendTones(writer, frames: 100..<150)
        let summary = try await writer.finish()
        #expect(summary.pausedIntervals == [.init(start: 1, end: 2)])

        let wav = try await Self.decode(path, rate: 8_000)
        #expect(wav.duration == 3)
        let quiet = wav.samples[8_400..<15_600]  // the pause, less the codec's fade out and in
        #expect(quiet.allSatisfy { abs(Int($0)) < 100 })
        #expect(toneLevel(wav.samples[16_400..<24_000], 440, sampleRate: 8_000) > 5_000)
    }

    /// A crash stops the writer anywhere: the file as it is once a flush interval passed
    /// since the last frame (no end-of-stream page) decodes up to its last page.
    @Test func fileCutShortWithoutFinishStillDecodes() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.opus")
        let writer = try CallRecordingWriter(
            path: path, configuration: .init(format: .ogg, layout: .stereo, flushInterval: 0.25))
        // 3.5 s: three full pages at once, the last half second only through a flush.
        appendTones(writer, frames: 0..<175)
        var crashed: [UInt8] = []
        let flushed = await eventually(timeout: 10) {
            crashed = snapshot(path)
            return Self.granules(crashed).last == 175 * 960
        }
        #expect(flushed, "pages' granule positions: \(Self.granules(crashed))")
        let copy = dir.path("crashed.opus")
        try Data(crashed).write(to: URL(fileURLWithPath: copy))
        _ = try await writer.finish()

        let info = try await Self.info(copy, complete: false)
        #expect(info.contains("Channels: 2"), "\(info)")
        let wav = try await Self.decode(copy, rate: 8_000)
        try #require(wav.channels.count == 2)
        // All but the encoder's delay (pre-skip), which only the final page gives back.
        try #require(wav.duration > 3.45 && wav.duration <= 3.5, "\(wav.duration) s")
        #expect(toneLevel(wav.channels[0][4_000..<27_000], 440, sampleRate: 8_000) > 5_000)
        #expect(toneLevel(wav.channels[1][4_000..<27_000], 1000, sampleRate: 8_000) > 5_000)
    }

    /// The granule positions of the whole pages in `bytes` whose CRC is right.
    static func granules(_ bytes: [UInt8]) -> [Int64] {
        var granules: [Int64] = []
        var at = 0
        while at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[at + 26])
            guard at + 27 + segments <= bytes.count else { break }
            let size = 27 + segments + bytes[(at + 27)..<(at + 27 + segments)].reduce(0) { $0 + Int($1) }
            guard at + size <= bytes.count else { break }
            var page = Array(bytes[at..<(at + size)])
            let crc = (0..<4).reduce(UInt32(0)) { $0 | UInt32(page[22 + $1]) << (8 * $1) }
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            guard page.withUnsafeBytes({ OggCRC.checksum($0) }) == crc else { break }
            granules.append((0..<8).reduce(Int64(0)) { $0 | Int64(bytes[at + 6 + $1]) << (8 * $1) })
            at += size
        }
        return granules
    }
}
