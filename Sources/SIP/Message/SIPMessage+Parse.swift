extension SIPMessage {
    /// How the bytes arrived, which decides what a missing or short Content-Length means
    /// (RFC 3261 §18.3).
    public enum Framing: Sendable {
        /// One UDP datagram: no Content-Length means the body runs to the end; octets past
        /// Content-Length are ignored (RFC 4475 §3.1.1.8); a longer Content-Length is an error.
        case datagram
        /// Exactly one message cut from a stream by `SIPStreamFramer`.
        case stream
    }

    /// Limits that protect the parser from hostile input.
    public static let maxHeaderCount = 256
    public static let maxMessageSize = 65_535

    /// Parses and validates one message.
    ///
    /// ```
    /// SIP-message  = Request / Response
    /// Request-Line = Method SP Request-URI SP SIP-Version CRLF
    /// Status-Line  = SIP-Version SP Status-Code SP Reason-Phrase CRLF
    /// message-header = field-name HCOLON field-value CRLF   (LWS folding allowed)
    /// ```
    /// Beyond the grammar, it checks what RFC 3261 §8.2 and RFC 4475 expect of a receiver:
    /// the mandatory headers, single-valued headers that appear once, 32-bit scalars, a CSeq
    /// method that matches the request, a Request-URI without headers, a Content-Length that
    /// agrees with the body. Errors carry the status to answer a request with (400, 505).
    public static func parse(_ bytes: [UInt8], framing: Framing = .datagram) throws(SIPParseError) -> SIPMessage {
        guard bytes.count <= maxMessageSize else { throw .init(513, "message too large") }
        var i = 0
        // RFC 3261 §7.5: ignore CRLFs before the start line (keep-alives on streams).
        while i < bytes.count, bytes[i] == 0x0D || bytes[i] == 0x0A { i += 1 }

        var lines: [(start: Int, end: Int)] = []
        var bodyStart = -1
        while i < bytes.count {
            var j = i
            while j < bytes.count, bytes[j] != 0x0A { j += 1 }
            let end = (j > i && bytes[j - 1] == 0x0D) ? j - 1 : j
            if end == i {
                bodyStart = min(j + 1, bytes.count)
                break
            }
            lines.append((i, end))
            i = j + 1
            if j >= bytes.count { break }
        }
        guard !lines.isEmpty else { throw .init(400, "empty message") }
        if bodyStart < 0 {
            // A datagram that ends right after the last header line has an empty body.
            guard framing == .datagram, bytes.last == 0x0A else { throw .init(400, "header section not terminated") }
            bodyStart = bytes.count
        }

        let startLine: StartLine
        do throws(SIPParseError) {
            startLine = try parseStartLine(bytes[lines[0].start..<lines[0].end])
        } catch {
            var e = error
            e.partial = requestAfterBadStartLine(bytes, lines)
            throw e
        }
        var headers: [SIPHeader] = []
        headers.reserveCapacity(lines.count)
        var controlByte: UInt8?
        for (lineStart, lineEnd) in lines.dropFirst() {
            // field-value = *(TEXT-UTF8char / UTF8-CONT / LWS): no control byte but HTAB, in
            // any header (a NUL in Call-ID reaches logs, databases and C strings). The message
            // is refused, but read on without them, so the 400 can copy Via, Call-ID and CSeq.
            var line = bytes[lineStart..<lineEnd]
            if let bad = SIPScanner.forbiddenControl(in: line) {
                controlByte = controlByte ?? bad
                line = ArraySlice(line.filter { !SIPScanner.isForbiddenControl($0) })
                guard !line.isEmpty else { continue }
            }
            let start = line.startIndex, end = line.endIndex
            let first = line[start]
            if first == 0x20 || first == 0x09 {
                guard !headers.isEmpty else { throw .init(400, "continuation line before any header") }
                let more = String(decoding: line, as: UTF8.self).trimmingSIPWhitespace()
                if !more.isEmpty {
                    headers[headers.count - 1].value += headers[headers.count - 1].value.isEmpty ? more : " " + more
                }
                continue
            }
            guard let colon = line.firstIndex(of: 0x3A) else {
                throw .init(
                    400, "header line without a colon", partial: SIPMessage(startLine: startLine, headers: headers))
            }
            var nameEnd = colon
            while nameEnd > start, line[nameEnd - 1] == 0x20 || line[nameEnd - 1] == 0x09 { nameEnd -= 1 }
            let nameBytes = line[start..<nameEnd]
            guard !nameBytes.isEmpty, nameBytes.allSatisfy(SIPScanner.isTokenChar) else {
                throw .init(400, "bad header name", partial: SIPMessage(startLine: startLine, headers: headers))
            }
            var valueStart = colon + 1, valueEnd = end
            while valueStart < valueEnd, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let value = String(decoding: line[valueStart..<valueEnd], as: UTF8.self)
            headers.append(SIPHeader(SIPHeaderName(String(decoding: nameBytes, as: UTF8.self)), value))
            guard headers.count <= maxHeaderCount else { throw .init(400, "too many header fields") }
        }

        var message = SIPMessage(startLine: startLine, headers: headers)
        if let controlByte {
            throw .init(400, "control byte 0x\(String(controlByte, radix: 16)) in a header", partial: message)
        }
        do throws(SIPParseError) {
            let bodyLength = try message.validatedContentLength()
            let available = bytes.count - bodyStart
            if let bodyLength {
                guard bodyLength <= available else {
                    throw SIPParseError(
                        400, "Content-Length \(bodyLength) is larger than the body (\(available) octets)",
                        header: "Content-Length")
                }
                message.body = Array(bytes[bodyStart..<(bodyStart + bodyLength)])
            } else {
                guard framing == .datagram else {
                    throw SIPParseError(400, "Content-Length is required on a stream", header: "Content-Length")
                }
                message.body = Array(bytes[bodyStart...])
            }
            try message.validate()
        } catch {
            var e = error
            e.partial = message
            throw e
        }
        return message
    }

    /// A request whose Request-Line is broken still gets its 400 or 505 (RFC 4475 §3.1.2.7,
    /// §3.1.2.8, §3.1.2.16): its method token and header fields, read loosely, are enough to
    /// copy Via, From, To, Call-ID and CSeq into the answer. Nil for a response.
    private static func requestAfterBadStartLine(_ bytes: [UInt8], _ lines: [(start: Int, end: Int)]) -> SIPMessage? {
        let first = bytes[lines[0].start..<lines[0].end]
        guard !first.starts(with: Array("SIP/".utf8)) else { return nil }
        let method = String(decoding: first.prefix(while: { $0 != 0x20 }), as: UTF8.self)
        guard SIPScanner.isToken(method) else { return nil }
        var headers: [SIPHeader] = []
        for (start, end) in lines.dropFirst().prefix(maxHeaderCount) {
            guard bytes[start] != 0x20, bytes[start] != 0x09, let colon = bytes[start..<end].firstIndex(of: 0x3A) else {
                continue
            }
            let name = String(decoding: bytes[start..<colon], as: UTF8.self).trimmingSIPWhitespace()
            guard SIPScanner.isToken(name) else { continue }
            let value = String(decoding: bytes[(colon + 1)..<end], as: UTF8.self).trimmingSIPWhitespace()
            headers.append(SIPHeader(SIPHeaderName(name), value))
        }
        return SIPMessage(startLine: .request(method: method, uri: SIPURI(host: "invalid")), headers: headers)
    }

    private static func parseStartLine(_ line: ArraySlice<UInt8>) throws(SIPParseError) -> StartLine {
        if line.starts(with: Self.versionPrefix) {
            // Status-Line; Reason-Phrase may be empty or hold UTF-8 (RFC 4475 §3.1.1.12-13).
            guard let sp = line.firstIndex(of: 0x20) else { throw .init(400, "malformed status line") }
            guard line[line.startIndex..<sp].elementsEqual(Self.version) else {
                throw .init(505, "unsupported version \(String(decoding: line[line.startIndex..<sp], as: UTF8.self))")
            }
            let codeStart = sp + 1
            let codeEnd = line[codeStart...].firstIndex(of: 0x20) ?? line.endIndex
            guard codeEnd - codeStart == 3, line[codeStart..<codeEnd].allSatisfy(isDigit) else {
                throw .init(400, "bad status code \(String(decoding: line[codeStart..<codeEnd], as: UTF8.self))")
            }
            let code = line[codeStart..<codeEnd].reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard (100...699).contains(code) else { throw .init(400, "bad status code \(code)") }
            guard !line.contains(where: SIPScanner.isForbiddenControl) else {
                throw .init(400, "control byte in the status line")
            }
            let reason = codeEnd < line.endIndex ? String(decoding: line[(codeEnd + 1)...], as: UTF8.self) : ""
            return .response(status: code, reason: reason)
        }
        // Method SP Request-URI SP SIP-Version: exactly two single spaces (RFC 4475 §3.1.2.9-10).
        guard let sp1 = line.firstIndex(of: 0x20), let sp2 = line[(sp1 + 1)...].firstIndex(of: 0x20),
            !line[(sp2 + 1)...].contains(0x20), sp1 > line.startIndex, sp2 > sp1 + 1, sp2 + 1 < line.endIndex
        else {
            throw .init(400, "request line must be Method SP Request-URI SP SIP-Version")
        }
        guard !line.contains(where: SIPScanner.isForbiddenControl) else {
            throw .init(400, "control byte in the request line")
        }
        let methodBytes = line[line.startIndex..<sp1]
        guard methodBytes.allSatisfy(SIPScanner.isTokenChar) else { throw .init(400, "bad method") }
        let version = line[(sp2 + 1)...]
        guard version.count == 7,
            zip(version, Self.version).allSatisfy({ ($0 | ($0 >= 0x41 ? 0x20 : 0)) == ($1 | ($1 >= 0x41 ? 0x20 : 0)) })
        else {
            let text = String(decoding: version, as: UTF8.self)
            if text.uppercased().hasPrefix("SIP/") { throw .init(505, "unsupported version \(text)") }
            throw .init(400, "bad SIP version \(text)")
        }
        let uri = try SIPURI.parse(String(decoding: line[(sp1 + 1)..<sp2], as: UTF8.self))
        return .request(method: String(decoding: methodBytes, as: UTF8.self), uri: uri)
    }

    private static let version = Array("SIP/2.0".utf8)
    private static let versionPrefix = Array("SIP/".utf8)
}

extension SIPParseError {
    init(_ status: Int, _ reason: String, partial: SIPMessage) {
        self.init(status, reason)
        self.partial = partial
    }
}
