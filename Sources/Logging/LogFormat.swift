/// How a line is written.
public enum LogFormat: String, CaseIterable, Sendable {
    /// One line of words, as the gateway always wrote them (`irisgw: ...`); no time stamp
    /// (journald and the like add their own).
    case text
    /// One JSON object per line: `time`, `level`, `component`, `msg` and the line's fields.
    case json
}
