/// Buffered reading from a `TCPStream`: lines, heads, exact counts. Bytes read past what a
/// caller asked for stay buffered, so the WebSocket client can take over after the HTTP
/// upgrade without losing a frame that came in the same segment.
struct StreamReader: Sendable {
    let stream: TCPStream
    /// Unread bytes are `buffer[start...]`.
    private(set) var buffer: [UInt8] = []
    private var start = 0
    /// The peer has closed its side: nothing more will arrive.
    private(set) var atEOF = false

    init(stream: TCPStream) {
        self.stream = stream
        buffer.reserveCapacity(16 * 1024)
    }

    /// Bytes buffered and not consumed.
    var available: Int { buffer.count - start }

    /// The unread bytes (valid until the next mutating call).
    var unread: ArraySlice<UInt8> { buffer[start...] }

    /// Marks `count` unread bytes as consumed.
    mutating func consume(_ count: Int) {
        start += count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    /// Reads more from the socket (waiting until `deadline`); false at end of stream.
    mutating func fill(deadline: Deadline, operation: String) throws(IrisTransportError) -> Bool {
        if atEOF { return false }
        // Drop consumed bytes once they are the larger part, so the buffer does not grow.
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        let stream = self.stream
        let result: Result<Int, IrisTransportError> = withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 8) { scratch in
            do throws(IrisTransportError) {
                let n = try stream.receive(into: scratch, deadline: deadline, operation: operation)
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                return .success(n)
            } catch {
                return .failure(error)
            }
        }
        let n = try result.get()
        if n == 0 { atEOF = true }
        return n > 0
    }

    /// Reads up to and including the first CRLFCRLF; returns the head without it.
    mutating func readHead(limit: Int, deadline: Deadline, operation: String) throws(IrisTransportError) -> [UInt8] {
        var searchFrom = start
        while true {
            if let end = findBlankLine(from: searchFrom) {
                let head = Array(buffer[start..<end])
                consume(end + 4 - start)
                return head
            }
            guard available <= limit else { throw .tooLarge(what: "response head", limit: limit) }
            searchFrom = max(start, buffer.count - 3)
            let offset = searchFrom - start
            guard try fill(deadline: deadline, operation: operation) else {
                throw available == 0 ? .connectionClosed(during: operation)
                    : .malformedResponse("connection closed inside the response head")
            }
            searchFrom = start + offset
        }
    }

    /// Reads one CRLF-terminated line (LF alone is accepted) without its terminator.
    mutating func readLine(limit: Int, deadline: Deadline, operation: String) throws(IrisTransportError) -> [UInt8] {
        while true {
            if let lf = buffer[start...].firstIndex(of: 10) {
                var end = lf
                if end > start, buffer[end - 1] == 13 { end -= 1 }
                let line = Array(buffer[start..<end])
                consume(lf + 1 - start)
                return line
            }
            guard available <= limit else { throw .tooLarge(what: "line", limit: limit) }
            guard try fill(deadline: deadline, operation: operation) else {
                throw .connectionClosed(during: operation)
            }
        }
    }

    /// Reads exactly `count` bytes.
    mutating func readExactly(_ count: Int, deadline: Deadline, operation: String) throws(IrisTransportError) -> [UInt8] {
        while available < count {
            guard try fill(deadline: deadline, operation: operation) else {
                throw .connectionClosed(during: operation)
            }
        }
        let bytes = Array(buffer[start..<(start + count)])
        consume(count)
        return bytes
    }

    /// Reads until the peer closes, at most `limit` bytes.
    mutating func readToEnd(limit: Int, deadline: Deadline, operation: String) throws(IrisTransportError) -> [UInt8] {
        while try fill(deadline: deadline, operation: operation) {
            guard available <= limit else { throw .tooLarge(what: "response body", limit: limit) }
        }
        let bytes = Array(buffer[start...])
        consume(available)
        return bytes
    }

    /// Index of the first CRLFCRLF at or after `from`.
    private func findBlankLine(from: Int) -> Int? {
        var i = from
        while i + 4 <= buffer.count {
            if buffer[i] == 13, buffer[i + 1] == 10, buffer[i + 2] == 13, buffer[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }
}
