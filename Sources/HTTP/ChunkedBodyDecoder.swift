/// Decodes a chunked body (RFC 9112 §7.1) as its bytes arrive; trailer fields are read and
/// dropped.
package struct ChunkedBodyDecoder: Sendable {
    private enum State: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    private var state = State.size
    private var trailerBytes = 0
    /// The body so far.
    package private(set) var body: [UInt8] = []
    package let maxBodyBytes: Int
    package let maxTrailerBytes: Int

    package init(maxBodyBytes: Int, maxTrailerBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
        self.maxTrailerBytes = maxTrailerBytes
    }

    package var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Consumes what it can from `input`; true once the whole body is in.
    package mutating func decode(_ input: inout ByteBuffer) throws(HTTPRequestError) -> Bool {
        while true {
            switch state {
            case .done:
                return true
            case .size:
                guard let line = try takeLine(&input, limit: 1024) else { return false }
                guard let size = HTTPSyntax.chunkSize(line: line) else {
                    throw HTTPRequestError(400, "malformed chunk size")
                }
                if size == 0 {
                    state = .trailers
                } else {
                    guard size <= maxBodyBytes - body.count else {
                        throw HTTPRequestError(413, "request body too large")
                    }
                    state = .data(remaining: size)
                }
            case .data(let remaining):
                guard input.count > 0 else { return false }
                let n = min(remaining, input.count)
                body += input.unread.prefix(n)
                input.consume(n)
                state = n == remaining ? .dataEnd : .data(remaining: remaining - n)
            case .dataEnd:
                guard input.count >= 2 else { return false }
                guard input.unread.starts(with: [13, 10]) else {
                    throw HTTPRequestError(400, "chunk data not followed by CRLF")
                }
                input.consume(2)
                state = .size
            case .trailers:
                guard let line = try takeLine(&input, limit: maxTrailerBytes) else { return false }
                if line.isEmpty {
                    state = .done
                } else {
                    trailerBytes += line.count + 2
                    guard trailerBytes <= maxTrailerBytes else {
                        throw HTTPRequestError(431, "trailer fields too large")
                    }
                }
            }
        }
    }

    /// One CRLF-terminated line without its CRLF, or nil until it is complete.
    private func takeLine(_ input: inout ByteBuffer, limit: Int) throws(HTTPRequestError) -> [UInt8]? {
        let unread = input.unread
        guard let lf = unread.firstIndex(of: 10) else {
            guard unread.count <= limit else { throw HTTPRequestError(400, "chunked framing line too long") }
            return nil
        }
        guard lf > unread.startIndex, unread[lf - 1] == 13 else {
            throw HTTPRequestError(400, "bare LF in chunked framing")
        }
        let line = Array(unread[unread.startIndex..<(lf - 1)])
        guard line.count <= limit else { throw HTTPRequestError(400, "chunked framing line too long") }
        input.consume(lf + 1 - unread.startIndex)
        return line
    }
}
