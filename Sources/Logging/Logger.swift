/// Writes the lines of one component, with the fields every one of them carries (`with`).
/// A value: cheap to copy, safe from any thread. A line below the component's level costs
/// one atomic load; its message and fields are built only when it is written.
///
/// ```swift
/// let log = Logger(.calls).with(["roomId": "\(roomId)", "traceId": "\(traceId)"])
/// log.info("call ended: \(reason)", ["reason": "\(reason)", "durationMs": .int(ms)])
/// ```
public struct Logger: Sendable {
    public let component: LogComponent
    /// What the text format writes before the message. Default `irisgw: `.
    public var textPrefix: String
    /// Fields written on every line, before the line's own.
    public private(set) var context: [LogField]
    public let sink: LogSink

    public init(_ component: LogComponent, textPrefix: String = "irisgw: ", sink: LogSink = .standardError) {
        self.component = component
        self.textPrefix = textPrefix
        self.context = []
        self.sink = sink
    }

    /// The same logger with `fields` added to its context (`roomId`, `traceId`, `callId`).
    public func with(_ fields: KeyValuePairs<String, LogValue>) -> Logger {
        var copy = self
        copy.context += fields.map { LogField($0.key, $0.value) }
        return copy
    }

    /// The same logger with `field` in its context when it is not nil.
    public func with(_ key: String, _ value: LogValue?) -> Logger {
        guard let value else { return self }
        var copy = self
        copy.context.append(LogField(key, value))
        return copy
    }

    /// Whether a line of `level` would be written.
    public func isEnabled(_ level: LogLevel) -> Bool { sink.isEnabled(level, for: component) }

    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String,
        _ fields: @autoclosure () -> KeyValuePairs<String, LogValue> = [:]
    ) {
        guard sink.isEnabled(level, for: component) else { return }
        sink.emit(
            LogRecord(
                level: level, component: component, message: message(),
                fields: context + fields().map { LogField($0.key, $0.value) }, textPrefix: textPrefix))
    }

    public func debug(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, LogValue> = [:]
    ) { log(.debug, message(), fields()) }

    public func info(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, LogValue> = [:]
    ) { log(.info, message(), fields()) }

    public func notice(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, LogValue> = [:]
    ) { log(.notice, message(), fields()) }

    public func warning(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, LogValue> = [:]
    ) { log(.warning, message(), fields()) }

    public func error(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, LogValue> = [:]
    ) { log(.error, message(), fields()) }
}
