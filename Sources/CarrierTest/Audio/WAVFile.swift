import Media

/// WAV files of a test call's audio (`--evidence`): RIFF/WAVE, 16-bit PCM, mono.
///
/// A byte-level face on the Media module's `WAVFile` (which also reads and writes paths);
/// inside this module `WAVFile` means this enum, elsewhere spell it `CarrierTest.WAVFile`
/// when both modules are imported.
public enum WAVFile {
    /// The file's bytes: the 44-byte canonical header (`RIFF` size `WAVE`, `fmt ` 16 with
    /// tag 1, 1 channel, the rate, rate × 2 bytes/s, align 2, 16 bits; `data` size) and
    /// the samples little-endian. A rate outside 1...2³¹-1 is written clamped into it.
    public static func encode(_ samples: [Int16], sampleRate: Int) -> [UInt8] {
        let rate = max(1, min(sampleRate, Int(UInt32.max) / 2))
        // Cannot fail: the only error is the rate, clamped above.
        return (try? Media.WAVFile(sampleRate: rate, samples: samples).encoded()) ?? []
    }

    /// Reads WAV bytes (16-bit PCM, mono or stereo averaged to mono; unknown chunks
    /// skipped).
    public static func decode(_ bytes: [UInt8]) throws(WAVError) -> (samples: [Int16], sampleRate: Int) {
        let file = try Media.WAVFile(bytes: bytes)
        return (file.samples, file.sampleRate)
    }
}
