/// What the log prints and how: `irisgw serve --log-format`, `--log-level` and the settings
/// keys `logFormat`, `logLevel`, `logLevels` (docs/operations.md, "Logs").
public struct LogConfiguration: Sendable, Equatable {
    /// Default `.text`.
    public var format: LogFormat
    /// The level of every component without one of its own in `levels`. Default `.info`.
    public var level: LogLevel
    /// Levels of single components, over `level`. Default none.
    public var levels: [LogComponent: LogLevel]

    public init(format: LogFormat = .text, level: LogLevel = .info, levels: [LogComponent: LogLevel] = [:]) {
        self.format = format
        self.level = level
        self.levels = levels
    }

    /// The level `component` prints from.
    public func level(for component: LogComponent) -> LogLevel { levels[component] ?? level }

    /// Applies `--log-level`'s value: `LEVEL`, `COMPONENT=LEVEL`, or several of them
    /// separated by commas (`info,sip=debug,media=warning`). A bare level sets `level`; a
    /// component's replaces what `levels` held for it. Changes nothing when any part is bad.
    public mutating func apply(levelSpecification text: String) throws(LogSettingError) {
        var next = self
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        for part in parts {
            let item = part.trimmingSpaces
            guard let equals = item.firstIndex(of: "=") else {
                next.level = try Self.level(item)
                continue
            }
            let name = String(item[..<equals]).trimmingSpaces
            guard let component = LogComponent(rawValue: name) else {
                throw LogSettingError(
                    "unknown log component \"\(name)\" (components: \(LogComponent.names))")
            }
            next.levels[component] = try Self.level(String(item[item.index(after: equals)...]).trimmingSpaces)
        }
        self = next
    }

    /// A level by name.
    public static func level(_ name: String) throws(LogSettingError) -> LogLevel {
        guard let level = LogLevel(rawValue: name) else {
            throw LogSettingError("unknown log level \"\(name)\" (levels: \(LogLevel.names))")
        }
        return level
    }
}

/// A log setting that cannot be used, with why.
public struct LogSettingError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension StringProtocol {
    /// Without the spaces around it (ASCII spaces only: the names are ASCII).
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
