import Formats
import Logging

extension ServeConfiguration {
    /// The log keys (docs/operations.md, "Logs"); `--log-format` and `--log-level` win over
    /// them. Every key optional.
    ///
    /// ```json5
    /// logFormat: "json",                        // "text" (default) or "json"
    /// logLevel: "notice",                       // every component's level; default "info"
    /// logLevels: { sip: "debug", calls: "warning" },  // single components' levels
    /// ```
    static let logKeys = ["logFormat", "logLevel", "logLevels"]

    /// What the file says of the log over `LogConfiguration`'s defaults.
    public var log: LogConfiguration {
        LogConfiguration(format: logFormat ?? .text, level: logLevel ?? .info, levels: logLevels ?? [:])
    }

    static func logSettings(
        _ o: ProfileSchema.ObjectFields, schema: ProfileSchema, into c: inout ServeConfiguration
    ) throws(ProfileError) {
        c.logFormat = try o.optional("logFormat") { (v, p) throws(ProfileError) in
            try schema.choice(v, at: p, LogFormat.self)
        }
        c.logLevel = try o.optional("logLevel") { (v, p) throws(ProfileError) in
            try schema.choice(v, at: p, LogLevel.self)
        }
        c.logLevels = try o.optional("logLevels") { (v, p) throws(ProfileError) -> [LogComponent: LogLevel] in
            let levels = try schema.object(v, at: p, keys: LogComponent.allCases.map(\.rawValue))
            var out: [LogComponent: LogLevel] = [:]
            for member in levels.members {
                // The keys were checked against the components just above.
                guard let component = LogComponent(rawValue: member.key) else { continue }
                out[component] = try schema.choice(member.value, at: p + "." + member.key, LogLevel.self)
            }
            return out
        }
    }
}
