/// Turns 20 ms frames into a file's bytes, on the writer thread. PCM arrives interleaved
/// (left trunk, right app) for stereo, one channel for mixed.
protocol RecordingEncoder: AnyObject {
    /// The bytes that start the file.
    func header() throws(CallRecordingError) -> [UInt8]
    /// Encodes one frame, appending what the file gains to `out`.
    func encode(_ pcm: UnsafeBufferPointer<Int16>, into out: inout [UInt8]) throws(CallRecordingError)
    /// Makes what is written so far a whole file: bytes to append (a page in progress) and
    /// patches (a header's sizes), once `out` is appended.
    func flush(into out: inout [UInt8]) -> [(offset: Int, bytes: [UInt8])]
    /// Ends the file: the last bytes to append and the last patches.
    func finish(into out: inout [UInt8]) throws(CallRecordingError) -> [(offset: Int, bytes: [UInt8])]
}

/// WAV: a 44-byte header whose RIFF and data sizes are patched on each flush, so a file cut
/// short by a crash still opens with everything up to the last flush.
final class WAVRecordingEncoder: RecordingEncoder {
    private let sampleRate: Int
    private let channels: Int
    private var dataBytes = 0
    private var patchedBytes = 0

    init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    func header() throws(CallRecordingError) -> [UInt8] {
        do {
            return try WAVFile.header(sampleRate: sampleRate, channels: channels, dataBytes: 0)
        } catch {
            throw .invalidConfiguration(error.description)
        }
    }

    func encode(_ pcm: UnsafeBufferPointer<Int16>, into out: inout [UInt8]) {
        for sample in pcm {
            let bits = UInt16(bitPattern: sample)
            out.append(UInt8(truncatingIfNeeded: bits))
            out.append(UInt8(truncatingIfNeeded: bits >> 8))
        }
        dataBytes += pcm.count * 2
    }

    func flush(into out: inout [UInt8]) -> [(offset: Int, bytes: [UInt8])] {
        // Sizes as they will be once `out` is appended.
        guard dataBytes != patchedBytes else { return [] }
        patchedBytes = dataBytes
        return [
            (WAVFile.riffSizeOffset, WAVFile.littleEndian(WAVFile.riffSize(dataBytes: dataBytes))),
            (WAVFile.dataSizeOffset, WAVFile.littleEndian(WAVFile.dataSize(dataBytes: dataBytes)))
        ]
    }

    func finish(into out: inout [UInt8]) -> [(offset: Int, bytes: [UInt8])] { flush(into: &out) }
}

/// `array.withUnsafeBufferPointer` keeping `body`'s error type (the standard one rethrows
/// `any Error`).
func withBuffer<Element>(
    _ array: [Element], _ body: (UnsafeBufferPointer<Element>) throws(CallRecordingError) -> Void
) throws(CallRecordingError) {
    let result: Result<Void, CallRecordingError> = array.withUnsafeBufferPointer { buffer in
        do throws(CallRecordingError) {
            try body(buffer)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
    try result.get()
}
