/// `POST /v1/admin/reload` (API key only; docs/api.md, "Reloading the configuration"): what
/// the reload put in force. SIGHUP writes the same summary to stderr.
public struct ReloadSummary: Codable, Sendable, Equatable {
    /// Profiles read again and in force for new calls: changed or added, by name.
    public var reloaded: [String]
    /// Profiles whose files say what they said before, by name.
    public var unchanged: [String]
    /// Profiles whose files are gone: no new call uses them; calls in progress keep them.
    public var removed: [String]
    /// Serve configuration keys whose new values differ from those in force but take a
    /// restart (`sipListen`, `sip.tcp`, ...); the old values stay in force.
    public var restartRequired: [String]

    public init(reloaded: [String], unchanged: [String], removed: [String], restartRequired: [String]) {
        self.reloaded = reloaded
        self.unchanged = unchanged
        self.removed = removed
        self.restartRequired = restartRequired
    }
}

/// A refused reload (422): the file and the key at fault, besides the code and message of
/// every API error. Nothing changed.
public struct ReloadErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: Int
        public var message: String
        /// The file at fault, as the gateway was given it.
        public var file: String
        /// Dot and bracket path to the key at fault; "" when the file as a whole is.
        public var key: String
    }
    public var error: Detail

    public init(code: Int, message: String, file: String, key: String) {
        error = Detail(code: code, message: message, file: file, key: key)
    }
}
