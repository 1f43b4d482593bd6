import Foundation
import Synchronization

@testable import Media

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh path in a fresh temporary directory, removed by `cleanup`.
struct RecordingDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-rec-\(UUID().uuidString.prefix(8))")

    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// Appends `frames` 20 ms frames: a 440 Hz sine on the trunk side, 1000 Hz on the app side.
func appendTones(_ writer: CallRecordingWriter, frames: Range<Int>) {
    let rate = writer.configuration.sampleRate
    let n = writer.configuration.frameSamples
    for frame in frames {
        writer.append(
            trunk: sine(440, sampleRate: rate, count: n, offset: frame * n),
            app: sine(1000, sampleRate: rate, count: n, offset: frame * n))
    }
}

/// The amplitude of `frequency` in `samples` (whole seconds of a steady sine give its peak).
func toneLevel(_ samples: ArraySlice<Int16>, _ frequency: Double, sampleRate: Int) -> Double {
    Goertzel(frequency: frequency, sampleRate: Double(sampleRate)).amplitude(samples)
}

/// The file's bytes as they are now on disk: what a crash at this moment would leave.
func snapshot(_ path: String) -> [UInt8] {
    (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) } ?? []
}

/// The permission bits of `path`.
func fileMode(_ path: String) -> mode_t {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
}

/// A sink over a real file whose `append` blocks while held: a stalled disk.
final class HeldSink: RecordingSink, @unchecked Sendable {  // the writer thread calls it; the flags are atomic
    let file: RecordingFile
    private let gate = DispatchSemaphore(value: 0)
    private let holding = Atomic<Bool>(false)
    private let blockedFlag = Atomic<Bool>(false)

    init(path: String) throws { file = try RecordingFile(path: path) }

    /// From now on, `append` blocks until `release()`.
    func hold() { holding.store(true, ordering: .sequentiallyConsistent) }

    /// True once the writer thread is stuck in `append`.
    var blocked: Bool { blockedFlag.load(ordering: .sequentiallyConsistent) }

    func release() {
        holding.store(false, ordering: .sequentiallyConsistent)
        gate.signal()
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws(CallRecordingError) {
        if holding.load(ordering: .sequentiallyConsistent) {
            blockedFlag.store(true, ordering: .sequentiallyConsistent)
            gate.wait()
        }
        try file.append(bytes)
    }

    func patch(_ bytes: [UInt8], at offset: Int) throws(CallRecordingError) { try file.patch(bytes, at: offset) }

    func close() { file.close() }
}

/// A sink over a real file whose appends fail from the `failingFrom`-th on (the header is
/// the first): a full disk.
final class FailingSink: RecordingSink {
    let file: RecordingFile
    private let failingFrom: Int
    private var appends = 0

    init(path: String, failingFrom: Int) throws {
        file = try RecordingFile(path: path)
        self.failingFrom = failingFrom
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws(CallRecordingError) {
        appends += 1
        guard appends < failingFrom else { throw .io(path: file.path, reason: "No space left on device") }
        try file.append(bytes)
    }

    func patch(_ bytes: [UInt8], at offset: Int) throws(CallRecordingError) { try file.patch(bytes, at: offset) }

    func close() { file.close() }
}
