import IOCore

/// Cuts RESP replies out of a connection's byte stream (hiredis's reader does the parsing):
/// each frame is one whole reply, in the order the server sent them. The reader is a class
/// the framer shares when copied: one framer per connection.
public struct RedisFramer: StreamFramer {
    public typealias Frame = RedisValue
    public typealias Failure = RedisError

    private let reader = HiredisReader()

    public init() {}

    public var pending: Int { reader.unread }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) throws(RedisError) -> [RedisValue] {
        try reader.feed(bytes)
        var replies: [RedisValue] = []
        while let reply = try reader.next() { replies.append(reply) }
        return replies
    }
}
