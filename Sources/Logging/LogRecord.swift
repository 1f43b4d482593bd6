import Glibc

/// One line before it is written: what `Logger` hands `LogSink`, and what
/// `LogLineFormatter` turns into bytes.
public struct LogRecord: Sendable, Equatable {
    /// When it was logged, as seconds and nanoseconds since 1970 (UTC).
    public var time: LogTime
    public var level: LogLevel
    public var component: LogComponent
    /// The words of the line (the text format's, after `textPrefix`; `msg` in JSON).
    public var message: String
    /// The logger's context (`roomId`, `traceId`, `callId` ...) then the line's own fields.
    public var fields: [LogField]
    /// What the text format writes before `message` (`irisgw: `); JSON leaves it out.
    public var textPrefix: String

    public init(
        time: LogTime = .now(), level: LogLevel, component: LogComponent, message: String, fields: [LogField] = [],
        textPrefix: String = "irisgw: "
    ) {
        self.time = time
        self.level = level
        self.component = component
        self.message = message
        self.fields = fields
        self.textPrefix = textPrefix
    }
}

/// A wall-clock instant, UTC.
public struct LogTime: Sendable, Equatable {
    public var seconds: Int
    public var nanoseconds: Int

    public init(seconds: Int, nanoseconds: Int) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// CLOCK_REALTIME now.
    public static func now() -> LogTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return LogTime(seconds: ts.tv_sec, nanoseconds: ts.tv_nsec)
    }

    /// RFC 3339 in UTC with milliseconds: `2025-03-01T12:34:56.789Z`.
    public var rfc3339: String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + pad(Int32(nanoseconds / 1_000_000), 3) + "Z"
    }
}
