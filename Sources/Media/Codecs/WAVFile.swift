#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a WAV file could not be read or written.
public enum WAVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened, read or written (`reason` is the system's text).
    case io(path: String, reason: String)
    /// The first 12 bytes are not `RIFF <size> WAVE`.
    case notWAV
    /// A chunk header or the `fmt ` chunk ends before the file does.
    case truncated(String)
    /// No `fmt ` chunk before the `data` chunk.
    case missingFormat
    /// No `data` chunk.
    case missingData
    /// Not integer PCM (format tag 1, or 0xFFFE with the PCM sub-format): e.g. 3 is float,
    /// 6/7 are A-law/µ-law.
    case unsupportedEncoding(formatTag: UInt16)
    /// PCM, but not 16 bits per sample.
    case unsupportedBitsPerSample(Int)
    /// PCM, but neither mono nor stereo.
    case unsupportedChannelCount(Int)
    /// A sample rate of 0, or one the 32-bit header field cannot hold.
    case invalidSampleRate(Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .io(let path, let reason): "WAV \(path): \(reason)"
        case .notWAV: "not a WAV file (no RIFF/WAVE header)"
        case .truncated(let what): "WAV file truncated: \(what)"
        case .missingFormat: "WAV file has no fmt chunk before its data"
        case .missingData: "WAV file has no data chunk"
        case .unsupportedEncoding(let tag): "WAV encoding \(tag) is not supported (only 16-bit integer PCM, tag 1)"
        case .unsupportedBitsPerSample(let bits): "WAV with \(bits) bits per sample is not supported (only 16)"
        case .unsupportedChannelCount(let channels): "WAV with \(channels) channels is not supported (mono or stereo)"
        case .invalidSampleRate(let rate): "invalid WAV sample rate \(rate)"
        }
    }
}

/// 16-bit PCM audio in a RIFF/WAVE file: written mono; read from mono or stereo (stereo is
/// averaged down to mono).
///
/// Layout written (all little-endian):
///
///     "RIFF" size "WAVE"  "fmt " 16  tag=1 channels=1 rate rate*2 align=2 bits=16  "data" n  samples
public struct WAVFile: Sendable, Equatable {
    /// Samples per second.
    public var sampleRate: Int
    /// Mono samples.
    public var samples: [Int16]

    /// Audio at `sampleRate` Hz.
    public init(sampleRate: Int, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.samples = samples
    }

    /// Duration in seconds.
    public var duration: Double { sampleRate > 0 ? Double(samples.count) / Double(sampleRate) : 0 }

    /// Parses WAV file bytes. Unknown chunks (LIST, fact, ...) are skipped; a data chunk
    /// whose size runs past the end (a recorder that was killed) is read up to the end.
    public init(bytes: [UInt8]) throws(WAVError) {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else {
            throw .notWAV
        }
        var offset = 12
        var format: (channels: Int, rate: Int)?
        while offset + 8 <= bytes.count {
            let id = bytes[offset..<(offset + 4)]
            let size = Int(Self.uint32(bytes, offset + 4))
            let body = offset + 8
            if id.elementsEqual("fmt ".utf8) {
                guard size >= 16, body + 16 <= bytes.count else { throw .truncated("fmt chunk of \(size) bytes") }
                var tag = Self.uint16(bytes, body)
                // WAVE_FORMAT_EXTENSIBLE: the real format is the sub-format GUID's first 2 bytes.
                if tag == 0xFFFE, size >= 40, body + 26 <= bytes.count { tag = Self.uint16(bytes, body + 24) }
                let channels = Int(Self.uint16(bytes, body + 2))
                let rate = Int(Self.uint32(bytes, body + 4))
                let bits = Int(Self.uint16(bytes, body + 14))
                guard tag == 1 else { throw .unsupportedEncoding(formatTag: tag) }
                guard bits == 16 else { throw .unsupportedBitsPerSample(bits) }
                guard channels == 1 || channels == 2 else { throw .unsupportedChannelCount(channels) }
                guard rate > 0 else { throw .invalidSampleRate(rate) }
                format = (channels, rate)
            } else if id.elementsEqual("data".utf8) {
                guard let format else { throw .missingFormat }
                let end = min(body + size, bytes.count)
                let frameBytes = 2 * format.channels
                let frames = (end - body) / frameBytes
                self.sampleRate = format.rate
                self.samples = Self.decode(bytes, from: body, frames: frames, channels: format.channels)
                return
            }
            // Chunks are padded to an even size.
            offset = body + size + (size & 1)
        }
        throw format == nil ? .missingFormat : .missingData
    }

    /// Reads the WAV file at `path`.
    public init(contentsOf path: String) throws(WAVError) {
        try self.init(bytes: Self.readFile(path))
    }

    /// The file's bytes: a 44-byte header and the samples.
    public func encoded() throws(WAVError) -> [UInt8] {
        guard sampleRate > 0, sampleRate <= Int(UInt32.max) / 2 else { throw .invalidSampleRate(sampleRate) }
        let dataBytes = samples.count * 2
        var out: [UInt8] = []
        out.reserveCapacity(44 + dataBytes)
        out += "RIFF".utf8
        Self.append(UInt32(truncatingIfNeeded: 36 + dataBytes), to: &out)
        out += "WAVEfmt ".utf8
        Self.append(UInt32(16), to: &out)
        Self.append(UInt16(1), to: &out)  // PCM
        Self.append(UInt16(1), to: &out)  // mono
        Self.append(UInt32(sampleRate), to: &out)
        Self.append(UInt32(sampleRate * 2), to: &out)  // bytes per second
        Self.append(UInt16(2), to: &out)  // block align
        Self.append(UInt16(16), to: &out)  // bits per sample
        out += "data".utf8
        Self.append(UInt32(truncatingIfNeeded: dataBytes), to: &out)
        for sample in samples { Self.append(UInt16(bitPattern: sample), to: &out) }
        return out
    }

    /// Writes the file to `path` (replacing it).
    public func write(to path: String) throws(WAVError) {
        let bytes = try encoded()
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(path: path, reason: Self.errnoText()) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { writeSome(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw .io(path: path, reason: Self.errnoText()) }
            written += n
        }
    }

    // MARK: - Helpers

    private static func decode(_ bytes: [UInt8], from start: Int, frames: Int, channels: Int) -> [Int16] {
        [Int16](unsafeUninitializedCapacity: frames) { out, count in
            for frame in 0..<frames {
                let at = start + frame * 2 * channels
                let left = Int16(bitPattern: uint16(bytes, at))
                if channels == 2 {
                    let right = Int16(bitPattern: uint16(bytes, at + 2))
                    out[frame] = Int16((Int(left) + Int(right)) / 2)
                } else {
                    out[frame] = left
                }
            }
            count = frames
        }
    }

    private static func readFile(_ path: String) throws(WAVError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: path, reason: errnoText()) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw .io(path: path, reason: errnoText()) }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    private static func uint16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }

    private static func uint32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }

    private static func append(_ value: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    private static func append(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, through: 24, by: 8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    private static func errnoText() -> String {
        let code = errno
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}

/// POSIX `write`, outside the type so `WAVFile.write(to:)` does not shadow it.
private func writeSome(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}
