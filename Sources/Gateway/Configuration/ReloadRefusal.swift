/// Why a configuration reload changed nothing: a file with an error (named with its key),
/// or another reload under way.
public struct ReloadRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A profile or the serve configuration has an error: `file`, `key`, `message`.
        case invalid
        /// Another reload is under way (the control API does not wait for it).
        case busy
    }
    public var kind: Kind
    /// The file at fault as the gateway was given it; "" for `busy`.
    public var file: String
    /// The key path at fault; "" when the file as a whole is.
    public var key: String
    public var message: String

    /// A profile or serve file error.
    public init(_ error: ProfileError) {
        kind = .invalid
        file = error.file
        key = error.keyPath
        message = error.message
    }

    /// A refusal that no file caused (`busy`, or a command line that no longer reads).
    public init(kind: Kind, message: String) {
        self.kind = kind
        file = ""
        key = ""
        self.message = message
    }

    /// `<file>: <key>: <message>` as `ProfileError` writes it, or the message alone.
    public var description: String {
        if file.isEmpty { return message }
        return key.isEmpty ? "\(file): \(message)" : "\(file): \(key): \(message)"
    }
}
