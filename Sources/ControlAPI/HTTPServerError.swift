import IrisAPI

/// Why `HTTPServer.start()` failed.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the system's error text when there is one.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
