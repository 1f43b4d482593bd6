import CHiredis

/// hiredis's RESP parser (`redisReader`), wrapped once: every unsafe pointer of the module is
/// here. Bytes are fed in as they come off the socket, whole replies come out as
/// `RedisValue`s; hiredis builds its own `redisReply` tree, which is walked into values and
/// freed at once. Not thread-safe: one owner (a connection's framer) on one loop.
final class HiredisReader {
    private let reader: UnsafeMutablePointer<redisReader>

    init() {
        guard let made = redisReaderCreate() else { fatalError("irisgw: hiredis cannot allocate a reader") }
        reader = made
    }

    deinit { redisReaderFree(reader) }

    /// Bytes fed but not yet part of a complete reply.
    var unread: Int { CHiredis_readerUnread(reader) }

    /// Appends bytes from the stream.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(RedisError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard redisReaderFeed(reader, base.assumingMemoryBound(to: CChar.self), bytes.count) == REDIS_OK else {
            throw failure()
        }
    }

    /// The next complete reply, or nil until more bytes come. Throws when the stream is not
    /// RESP; nothing after that can be read.
    func next() throws(RedisError) -> RedisValue? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == REDIS_OK else { throw failure() }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return Self.value(of: raw.assumingMemoryBound(to: redisReply.self))
    }

    private func failure() -> RedisError {
        .protocolError(String(cString: CHiredis_readerError(reader)))
    }

    private static func value(of reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING: return .bulk(bytes(r.str, r.len))
        case REDIS_REPLY_STATUS: return .simpleString(String(decoding: bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int(r.integer))
        case REDIS_REPLY_ARRAY:
            guard let elements = r.element else { return .array([]) }
            return .array((0..<r.elements).map { i in elements[i].map(value(of:)) ?? .null })
        default: return .null
        }
    }

    private static func bytes(_ start: UnsafeMutablePointer<CChar>?, _ count: Int) -> [UInt8] {
        guard let start, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }
}
