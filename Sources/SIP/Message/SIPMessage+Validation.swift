extension SIPMessage {
    /// Headers that may appear once only (RFC 3261 §20; RFC 4475 §3.3.8-9); the first four
    /// are also mandatory.
    static let singleValued: [SIPHeaderName] = [.callID, .cseq, .from, .to, .maxForwards, .contentLength, .contentType]

    /// Content-Length, checked: one value, digits only, 32-bit (RFC 4475 §3.1.2.3, §3.3.9).
    func validatedContentLength() throws(SIPParseError) -> Int? {
        let all = headers.filter { $0.name == .contentLength }
        guard all.count <= 1 else { throw .init(400, "more than one Content-Length", header: "Content-Length") }
        guard let v = all.first?.value else { return nil }
        guard !v.isEmpty, v.utf8.count <= 10, v.utf8.allSatisfy(isDigit), let n = Int(v), n <= SIPMessage.maxMessageSize
        else {
            throw .init(400, "bad Content-Length \(v)", header: "Content-Length")
        }
        return n
    }

    /// The structural checks of RFC 3261 §8.2 that do not depend on what the receiver supports.
    func validate() throws(SIPParseError) {
        // One pass: count the single-valued headers, parse the ones that must be well formed.
        var seen = [Int](repeating: 0, count: Self.singleValued.count)
        var cseq: CSeq? = nil
        var haveVia = false
        for i in headers.indices {
            let name = headers[i].name
            let value = headers[i].value
            if let slot = Self.singleValued.firstIndex(of: name) {
                seen[slot] += 1
                guard seen[slot] == 1 else {
                    throw .init(400, "more than one \(name.canonical)", header: name.canonical)
                }
            }
            switch name {
            case .via:
                haveVia = true
                for v in SIPScanner.splitList(value) {
                    do { _ = try Via.parse(v) } catch { throw error.inHeader("Via") }
                }
            case .cseq:
                do { cseq = try CSeq.parse(value) } catch { throw error.inHeader("CSeq") }
            case .from, .to:
                do { _ = try NameAddress.parse(value) } catch { throw error.inHeader(name.canonical) }
            case .contact, .route, .recordRoute:
                for v in SIPScanner.splitList(value) where !(name == .contact && v == "*") {
                    do { _ = try NameAddress.parse(v) } catch { throw error.inHeader(name.canonical) }
                }
            case .callID:
                guard !value.isEmpty, !value.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) else {
                    throw .init(400, "bad Call-ID", header: "Call-ID")
                }
            case .maxForwards:
                guard !value.isEmpty, value.utf8.count <= 10, value.utf8.allSatisfy(isDigit), let n = Int(value),
                    n <= 255
                else {
                    throw .init(400, "Max-Forwards must be 0-255", header: "Max-Forwards")
                }
            case .expires:
                guard value.utf8.allSatisfy(isDigit), UInt32(value) != nil else {
                    throw .init(400, "bad Expires", header: "Expires")
                }
            case .retryAfter:
                let digits = value.prefix(while: { $0.isNumber })
                guard !digits.isEmpty, UInt32(digits) != nil else {
                    throw .init(400, "bad Retry-After", header: "Retry-After")
                }
            case .date:
                // rfc1123-date = wkday "," SP date1 SP time SP "GMT" (RFC 3261 §20.17)
                guard value.hasSuffix(" GMT"), value.split(separator: " ").count == 6 else {
                    throw .init(400, "Date must be an RFC 1123 date in GMT", header: "Date")
                }
            case .rseq:
                guard value.utf8.allSatisfy(isDigit), UInt32(value) != nil else {
                    throw .init(400, "bad RSeq", header: "RSeq")
                }
            case .rack:
                do { _ = try RAck.parse(value) } catch { throw error.inHeader("RAck") }
            case Self.warning:
                for w in SIPScanner.splitList(value) {
                    let code = w.prefix(while: { $0 != " " })
                    guard code.utf8.count == 3, code.utf8.allSatisfy(isDigit) else {
                        throw .init(400, "bad warn-code", header: "Warning")
                    }
                }
            default:
                break
            }
        }
        for slot in 0..<4 where seen[slot] == 0 {
            throw .init(400, "missing \(Self.singleValued[slot].canonical)", header: Self.singleValued[slot].canonical)
        }
        guard haveVia, let cseq else { throw .init(400, "missing Via", header: "Via") }
        if case .request(let method, let uri) = startLine {
            // RFC 3261 §19.1.1: headers are not allowed in a Request-URI.
            guard uri.headers == nil else { throw .init(400, "Request-URI must not contain headers") }
            guard cseq.method == method else {
                throw .init(400, "CSeq method \(cseq.method) does not match \(method)", header: "CSeq")
            }
        }
    }

    private static let warning = SIPHeaderName("Warning")
}
