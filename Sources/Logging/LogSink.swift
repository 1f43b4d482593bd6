import Glibc
import Synchronization

/// Where lines go: formats each and writes it in one write(2), so lines from several
/// threads never interleave. The levels and the format sit in one atomic word: a logger
/// asks `isEnabled` with a single relaxed load, so a line below its level costs nothing
/// more (its message is never built).
public final class LogSink: Sendable {
    /// The process's standard error, configured by `irisgw serve` at start (default
    /// `LogConfiguration()`: text, info).
    public static let standardError = LogSink(fileDescriptor: 2)

    private enum Output: Sendable {
        case fileDescriptor(Int32)
        case lines(@Sendable ([UInt8]) -> Void)
    }

    private let output: Output
    /// Bits 0-3 the format, then 4 bits per component (`LogComponent.slot`): its level's rank.
    private let word: Atomic<UInt64>
    private let current: Mutex<LogConfiguration>

    /// Lines to `fileDescriptor` (kept open by the caller).
    public init(fileDescriptor: Int32, configuration: LogConfiguration = LogConfiguration()) {
        output = .fileDescriptor(fileDescriptor)
        word = Atomic(Self.pack(configuration))
        current = Mutex(configuration)
    }

    /// Lines handed to `write` (a test's collector), newline included, one call per line.
    public init(configuration: LogConfiguration = LogConfiguration(), write: @escaping @Sendable ([UInt8]) -> Void) {
        output = .lines(write)
        word = Atomic(Self.pack(configuration))
        current = Mutex(configuration)
    }

    /// What the sink prints from now on (lines being written finish as they were).
    public var configuration: LogConfiguration {
        get { current.withLock { $0 } }
        set {
            current.withLock { c in
                c = newValue
                word.store(Self.pack(newValue), ordering: .relaxed)
            }
        }
    }

    /// Whether a line of `level` from `component` would be written.
    @inline(__always)
    public func isEnabled(_ level: LogLevel, for component: LogComponent) -> Bool {
        let bits = word.load(ordering: .relaxed)
        return UInt8(truncatingIfNeeded: (bits >> UInt64(4 + 4 * component.slot)) & 0xF) <= level.rank
    }

    /// Formats `record` and writes it, if its level is on.
    public func emit(_ record: LogRecord) {
        let bits = word.load(ordering: .relaxed)
        guard UInt8(truncatingIfNeeded: (bits >> UInt64(4 + 4 * record.component.slot)) & 0xF) <= record.level.rank
        else { return }
        let line = LogLineFormatter.line(record, format: bits & 0xF == 1 ? .json : .text)
        switch output {
        case .lines(let write): write(line)
        case .fileDescriptor(let fd): Self.write(line, to: fd)
        }
    }

    /// One write(2); a short one (a signal, a full pipe) goes on with the rest.
    private static func write(_ bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }

    private static func pack(_ c: LogConfiguration) -> UInt64 {
        var bits: UInt64 = c.format == .json ? 1 : 0
        for component in LogComponent.allCases {
            bits |= UInt64(c.level(for: component).rank) << UInt64(4 + 4 * component.slot)
        }
        return bits
    }
}
