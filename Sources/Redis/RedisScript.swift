import Crypto

/// A Lua script run with `RedisClient.eval`: sent as EVALSHA by its SHA-1, and as EVAL (which
/// loads it) only when the server does not know it (first use, a restart, SCRIPT FLUSH).
public struct RedisScript: Sendable, Hashable {
    public let source: String
    /// The SHA-1 of `source` in lowercase hex, the name the server knows it by.
    public let sha1: String

    public init(source: String) {
        self.source = source
        self.sha1 = Crypto.hex(Crypto.sha1(Array(source.utf8)))
    }
}
