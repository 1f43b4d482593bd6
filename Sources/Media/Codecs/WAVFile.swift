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

/// 16-bit PCM audio in a RIFF/WAVE file, mono or stereo.
///
/// Layout written (all little-endian; samples interleaved left, right when stereo):
///
///     "RIFF" size "WAVE"  "fmt " 16  tag=1 channels rate rate*2*channels align=2*channels bits=16  "data" n  samples
public struct WAVFile: Sendable, Equatable {
    /// The bytes before the samples in a file `encoded()` or `header(...)` writes.
    public static let headerSize = 44
    /// Where the RIFF chunk's size sits in that header (patched by a recorder as it writes).
    public static let riffSizeOffset = 4
    /// Where the data chunk's size sits in that header.
    public static let dataSizeOffset = 40

    /// Samples per second.
    public var sampleRate: Int
    /// One array of samples per channel (one or two, all the same length): left first.
    public var channels: [[Int16]]

    /// Mono audio at `sampleRate` Hz.
    public init(sampleRate: Int, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.channels = [samples]
    }

    /// Stereo audio at `sampleRate` Hz (the shorter channel is padded with silence).
    public init(sampleRate: Int, left: [Int16], right: [Int16]) {
        let count = max(left.count, right.count)
        self.sampleRate = sampleRate
        self.channels = [left, right].map { $0 + repeatElement(0, count: count - $0.count) }
    }

    /// The audio as one channel: a stereo file's channels averaged; setting it makes the file mono.
    public var samples: [Int16] {
        get {
            guard channels.count == 2 else { return channels.first ?? [] }
            return zip(channels[0], channels[1]).map { Int16((Int($0) + Int($1)) / 2) }
        }
        set { channels = [newValue] }
    }

    /// Duration in seconds.
    public var duration: Double { sampleRate > 0 ? Double(channels.first?.count ?? 0) / Double(sampleRate) : 0 }

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
                self.channels = (0..<format.channels).map {
                    Self.decode(bytes, from: body, frames: frames, channel: $0, of: format.channels)
                }
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
        guard channels.count == 1 || channels.count == 2 else { throw .unsupportedChannelCount(channels.count) }
        let frames = channels.map(\.count).min() ?? 0
        var out = try Self.header(
            sampleRate: sampleRate, channels: channels.count, dataBytes: frames * 2 * channels.count)
        out.reserveCapacity(out.count + frames * 2 * channels.count)
        for frame in 0..<frames {
            for channel in channels { Self.append(UInt16(bitPattern: channel[frame]), to: &out) }
        }
        return out
    }

    /// The 44-byte header of a 16-bit PCM file of `channels` channels whose data chunk holds
    /// `dataBytes` bytes (sizes past 4 GiB are cut to what the 32-bit fields hold).
    public static func header(sampleRate: Int, channels: Int, dataBytes: Int) throws(WAVError) -> [UInt8] {
        guard channels == 1 || channels == 2 else { throw .unsupportedChannelCount(channels) }
        guard sampleRate > 0, sampleRate <= Int(UInt32.max) / 4 else { throw .invalidSampleRate(sampleRate) }
        var out: [UInt8] = []
        out.reserveCapacity(headerSize)
        out += "RIFF".utf8
        append(riffSize(dataBytes: dataBytes), to: &out)
        out += "WAVEfmt ".utf8
        append(UInt32(16), to: &out)
        append(UInt16(1), to: &out)  // PCM
        append(UInt16(channels), to: &out)
        append(UInt32(sampleRate), to: &out)
        append(UInt32(sampleRate * 2 * channels), to: &out)  // bytes per second
        append(UInt16(2 * channels), to: &out)  // block align
        append(UInt16(16), to: &out)  // bits per sample
        out += "data".utf8
        append(dataSize(dataBytes: dataBytes), to: &out)
        return out
    }

    /// The RIFF chunk's size field for `dataBytes` of samples after a 44-byte header.
    public static func riffSize(dataBytes: Int) -> UInt32 { UInt32(clamping: headerSize - 8 + dataBytes) }

    /// The data chunk's size field for `dataBytes` of samples.
    public static func dataSize(dataBytes: Int) -> UInt32 { UInt32(clamping: dataBytes) }

    /// `value` as 4 little-endian bytes (for patching a header's sizes in place).
    public static func littleEndian(_ value: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
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

    private static func decode(
        _ bytes: [UInt8], from start: Int, frames: Int, channel: Int, of channels: Int
    ) -> [Int16] {
        [Int16](unsafeUninitializedCapacity: frames) { out, count in
            for frame in 0..<frames {
                out[frame] = Int16(bitPattern: uint16(bytes, start + (frame * channels + channel) * 2))
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
