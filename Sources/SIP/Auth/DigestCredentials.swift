/// A user name and password for digest authentication.
///
/// The password never appears in `description`, `debugDescription`, `dump` or a debugger's
/// view, so credentials can be interpolated into logs without leaking it.
public struct DigestCredentials: Sendable {
    /// The user name sent in `username`.
    public var username: String
    /// The shared secret; only ever hashed, never sent or shown.
    public var password: String

    /// Creates credentials.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

extension DigestCredentials: CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// `DigestCredentials(username: "alice", password: <redacted>)`.
    public var description: String {
        "DigestCredentials(username: \"\(username)\", password: <redacted>)"
    }
    /// Same as `description`.
    public var debugDescription: String { description }
    /// Hides the password from `dump` and `Mirror`-based printing.
    public var customMirror: Mirror {
        Mirror(self, children: ["username": username, "password": "<redacted>"])
    }
}
