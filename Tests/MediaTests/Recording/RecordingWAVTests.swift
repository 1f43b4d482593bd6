import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Media

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct RecordingWAVTests {
    @Test(arguments: [8_000, 16_000])
    func stereoKeepsEachSideOnItsChannel(sampleRate: Int) async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        let writer = try CallRecordingWriter(
            path: path, configuration: .init(format: .wav, layout: .stereo, sampleRate: sampleRate))
        appendTones(writer, frames: 0..<100)
        let summary = try await writer.finish()

        let wav = try WAVFile(contentsOf: path)
        #expect(wav.channels.count == 2 && wav.sampleRate == sampleRate)
        #expect(wav.duration == 2 && summary.duration == 2)
        #expect(summary.bytes == WAVFile.headerSize + 2 * sampleRate * 2 * 2)
        #expect(summary.bytes == snapshot(path).count)
        #expect(summary.pausedIntervals.isEmpty && summary.droppedFrames == 0)
        #expect(fileMode(path) == 0o600)
        let (left, right) = (wav.channels[0][...], wav.channels[1][...])
        #expect(toneLevel(left, 440, sampleRate: sampleRate) > 7_900)
        #expect(toneLevel(left, 1000, sampleRate: sampleRate) < 50)
        #expect(toneLevel(right, 1000, sampleRate: sampleRate) > 7_900)
        #expect(toneLevel(right, 440, sampleRate: sampleRate) < 50)
    }

    @Test func mixedHoldsBothSidesInOneChannel() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        let writer = try CallRecordingWriter(path: path, configuration: .init(format: .wav, layout: .mixed))
        appendTones(writer, frames: 0..<100)
        // A frame with one side missing: the other side alone.
        writer.append(trunk: nil, app: [Int16](repeating: 1234, count: 160))
        let summary = try await writer.finish()

        let wav = try WAVFile(contentsOf: path)
        #expect(wav.channels.count == 1 && summary.duration == 2.02)
        let tones = wav.samples[0..<16_000]
        #expect(toneLevel(tones, 440, sampleRate: 8_000) > 7_900)
        #expect(toneLevel(tones, 1000, sampleRate: 8_000) > 7_900)
        #expect(wav.samples[16_000...].allSatisfy { $0 == 1234 })
    }

    @Test func pausedStretchIsSilenceOfItsLength() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        let writer = try CallRecordingWriter(path: path, configuration: .init(format: .wav, layout: .stereo))
        appendTones(writer, frames: 0..<50)
        writer.pause()
        #expect(writer.isPaused)
        appendTones(writer, frames: 50..<75)
        writer.resume()
        appendTones(writer, frames: 75..<125)
        writer.pause()  // still paused at the end: the stretch ends with the file
        appendTones(writer, frames: 125..<150)
        let summary = try await writer.finish()

        #expect(summary.duration == 3)
        #expect(
            summary.pausedIntervals == [.init(start: 1, end: 1.5), .init(start: 2.5, end: 3)])
        let wav = try WAVFile(contentsOf: path)
        #expect(wav.duration == 3)
        for channel in wav.channels {
            #expect(channel[8_000..<12_000].allSatisfy { $0 == 0 })
            #expect(channel[20_000..<24_000].allSatisfy { $0 == 0 })
            #expect(channel[0..<8_000].contains { $0 != 0 } && channel[12_000..<20_000].contains { $0 != 0 })
        }
        #expect(toneLevel(wav.channels[0][12_000..<20_000], 440, sampleRate: 8_000) > 7_900)
    }

    /// A crash stops the writer anywhere: the file as it is on disk once a flush interval has
    /// passed since the last frame must open (sizes patched without `finish`) and hold it all.
    @Test func fileCutShortWithoutFinishStillOpens() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        let writer = try CallRecordingWriter(path: path, configuration: .init(format: .wav, flushInterval: 0.25))
        appendTones(writer, frames: 0..<150)
        var crashed: WAVFile?
        let opened = await eventually(timeout: 10) {
            crashed = try? WAVFile(bytes: snapshot(path))
            return crashed?.duration == 3
        }
        #expect(opened, "sizes in the header: \(crashed?.duration ?? -1) s")
        if let crashed {
            #expect(toneLevel(crashed.channels[0][...], 440, sampleRate: 8_000) > 7_900)
            #expect(toneLevel(crashed.channels[1][...], 1000, sampleRate: 8_000) > 7_900)
        }
        _ = try await writer.finish()
    }

    /// A stalled disk: the writer thread is stuck in a write, the caller keeps appending and
    /// is never held; the queue keeps the newest frames, drops the oldest and counts them, and
    /// the dropped stretch becomes silence so the timeline stays whole.
    @Test func fullQueueDropsOldestNeverTheCaller() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        let sink = try HeldSink(path: path)
        let writer = try CallRecordingWriter(
            path: path, configuration: .init(format: .wav, layout: .stereo, queueFrames: 10), sink: sink)
        // Frame k is the constant k + 1 on both sides: the file shows which frames survived.
        @Sendable func frame(_ k: Int) -> [Int16] { [Int16](repeating: Int16(k + 1), count: 160) }
        sink.hold()
        writer.append(trunk: frame(0), app: frame(0))
        #expect(await eventually(timeout: 10) { sink.blocked })

        let appended = Atomic<Int>(0)
        let caller = Thread { [writer] in
            for k in 1...100 {
                writer.append(trunk: frame(k), app: frame(k))
                appended.add(1, ordering: .sequentiallyConsistent)
            }
        }
        caller.start()
        let returned = await eventually(timeout: 10) { appended.load(ordering: .sequentiallyConsistent) == 100 }
        #expect(returned, "the caller was blocked after \(appended.load(ordering: .sequentiallyConsistent)) frames")
        #expect(writer.droppedFrames == 90)
        sink.release()
        let summary = try await writer.finish()

        #expect(summary.droppedFrames == 90 && summary.duration == 2.02)
        let wav = try WAVFile(contentsOf: path)
        let firstOfFrames = stride(from: 0, to: wav.channels[0].count, by: 160).map { wav.channels[0][$0] }
        #expect(firstOfFrames == [1] + [Int16](repeating: 0, count: 90) + (92...101).map { Int16($0) })
    }

    /// A write fails (a full disk): writing stops, the caller still never waits, and
    /// `finish` reports the failure, every time it is asked.
    @Test func writeFailureIsReportedByFinish() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        let writer = try CallRecordingWriter(
            path: path, configuration: .init(format: .wav), sink: try FailingSink(path: path, failingFrom: 2))
        appendTones(writer, frames: 0..<50)
        let failure = CallRecordingError.io(path: path, reason: "No space left on device")
        await #expect(throws: failure) { try await writer.finish() }
        appendTones(writer, frames: 50..<60)  // ignored once finishing
        await #expect(throws: failure) { try await writer.finish() }
        #expect(try WAVFile(contentsOf: path).duration == 0)
    }

    @Test func refusesBadSettingsAndExistingFiles() async throws {
        let dir = try RecordingDirectory()
        defer { dir.cleanup() }
        let path = dir.path("call.wav")
        #expect(throws: CallRecordingError.self) {
            try CallRecordingWriter(path: path, configuration: .init(sampleRate: 11_025))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        let first = try CallRecordingWriter(path: path, configuration: .init())
        #expect(throws: CallRecordingError.io(path: path, reason: "File exists")) {
            try CallRecordingWriter(path: path, configuration: .init())
        }
        _ = try await first.finish()
        #expect(try WAVFile(contentsOf: path).duration == 0)
    }
}
