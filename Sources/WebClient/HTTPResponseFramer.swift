// Cutting HTTP/1.1 responses (RFC 9112) out of the client's stream: the head with the HTTP
// module's grammar, the body framed by Content-Length, chunked coding, or the end of the
// connection (§6.3).

import HTTP
import IOCore

/// A client's response framer: bytes in, whole responses out (1xx interim heads skipped,
/// RFC 9110 §15.2). A body that runs to the end of the connection is completed by
/// `endOfStream()`. With `upgrade`, a 101 ends the HTTP part: what follows it stays in
/// `leftover` for the WebSocket framer.
struct HTTPResponseFramer: StreamFramer {
    typealias Frame = HTTPClientResponse
    typealias Failure = IrisTransportError

    private enum Body {
        case length(Int)
        case chunked(ChunkedBodyDecoder)
        case toEnd
    }

    /// The request's method (HEAD has no response body).
    let method: String
    let maxHeadBytes: Int
    let maxBodyBytes: Int
    /// A 101 completes the response and hands the rest of the stream on.
    let upgrade: Bool
    private var buffer = ByteBuffer()
    private var head: HTTPResponseHead?
    private var body: Body?
    /// Where the head search resumes (a CRLFCRLF cannot start before it).
    private var searchFrom = 0
    /// A response is complete (the client asked with `Connection: close`): the rest is ignored.
    private(set) var isDone = false
    /// A 101 arrived with `upgrade`: bytes from here on are the upgraded protocol's.
    private(set) var isUpgraded = false

    init(method: String, maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int, upgrade: Bool = false) {
        self.method = method
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.upgrade = upgrade
    }

    var pending: Int { isDone || isUpgraded ? 0 : max(buffer.count, head == nil ? 0 : 1) }

    /// The bytes after a 101, taken once.
    mutating func takeLeftover() -> ByteBuffer {
        defer { buffer = ByteBuffer() }
        return buffer
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(IrisTransportError) -> [HTTPClientResponse] {
        guard !isDone else { return [] }
        buffer.append(bytes)
        guard !isUpgraded else { return [] }
        while true {
            if head == nil {
                guard try cutHead() else { return [] }
                guard head != nil else { continue }  // an interim answer
                if isUpgraded || body == nil { return [finish([])] }
            }
            switch body {
            case .length(let n):
                guard buffer.count >= n else { return [] }
                let bytes = Array(buffer.unread.prefix(n))
                buffer.consume(n)
                return [finish(bytes)]
            case .chunked(var decoder):
                let whole: Bool
                do { whole = try decoder.decode(&buffer) } catch {
                    throw error.status == 413
                        ? .tooLarge(what: "response body", limit: maxBodyBytes) : .malformedResponse(error.message)
                }
                body = .chunked(decoder)
                return whole ? [finish(decoder.body)] : []
            case .toEnd:
                guard buffer.count <= maxBodyBytes else { throw .tooLarge(what: "response body", limit: maxBodyBytes) }
                return []
            case nil:
                return []
            }
        }
    }

    /// The peer closed the connection: the response whose body ran to the end, or why the
    /// stream ended too soon (`operation` says what was under way).
    mutating func endOfStream(during operation: String) throws(IrisTransportError) -> HTTPClientResponse {
        if head != nil, case .toEnd = body {
            let bytes = Array(buffer.unread)
            buffer.consume(bytes.count)
            return finish(bytes)
        }
        if head == nil, buffer.count > 0 { throw .malformedResponse("connection closed inside the response head") }
        throw .connectionClosed(during: operation)
    }

    /// Cuts a head from the buffer; false until a whole one is in. A 1xx other than an
    /// accepted 101 is dropped (head stays nil).
    private mutating func cutHead() throws(IrisTransportError) -> Bool {
        let unread = buffer.unread
        var i = unread.startIndex + searchFrom
        var end: Int?
        while i + 4 <= unread.endIndex {
            if unread[i] == 13, unread[i + 1] == 10, unread[i + 2] == 13, unread[i + 3] == 10 {
                end = i
                break
            }
            i += 1
        }
        guard let end else {
            guard buffer.count <= maxHeadBytes else { throw .tooLarge(what: "response head", limit: maxHeadBytes) }
            searchFrom = max(0, buffer.count - 3)
            return false
        }
        let bytes = Array(unread[unread.startIndex..<end])
        buffer.consume(end + 4 - unread.startIndex)
        searchFrom = 0
        let parsed: HTTPResponseHead
        do { parsed = try HTTPResponseHead.parse(bytes) } catch { throw .malformedResponse(error.message) }
        if parsed.status == 101 && upgrade {
            head = parsed
            isUpgraded = true
            return true
        }
        if parsed.status < 200 && parsed.status != 101 { return true }
        head = parsed
        if method == "HEAD" || parsed.status < 200 || parsed.status == 204 || parsed.status == 304 {
            body = nil
        } else if parsed.isChunked {
            body = .chunked(ChunkedBodyDecoder(maxBodyBytes: maxBodyBytes, maxTrailerBytes: 8 * 1024))
        } else {
            let length: Int?
            do { length = try parsed.contentLength() } catch { throw .malformedResponse(error.message) }
            if let length {
                guard length <= maxBodyBytes else { throw .tooLarge(what: "response body", limit: maxBodyBytes) }
                body = .length(length)
            } else {
                body = .toEnd
            }
        }
        return true
    }

    private mutating func finish(_ bytes: [UInt8]) -> HTTPClientResponse {
        if !isUpgraded { isDone = true }
        return HTTPClientResponse(status: head!.status, headers: head!.headers, body: bytes)
    }
}
