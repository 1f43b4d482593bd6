extension SIPMessage {
    /// Headers that may appear once only (RFC 3261 §20; RFC 4475 §3.3.8-9).
    static let singleValued: [SIPHeaderName] = [.callID, .cseq, .from, .to, .maxForwards, .contentLength, .contentType]

    /// Content-Length, checked: one value, digits only, 32-bit (RFC 4475 §3.1.2.3, §3.3.9).
    func validatedContentLength() throws(SIPParseError) -> Int? {
        let all = headers.filter { $0.name == .contentLength }
        guard all.count <= 1 else { throw .init(400, "more than one Content-Length", header: "Content-Length") }
        guard let v = all.first?.value else { return nil }
        guard !v.isEmpty, v.utf8.count <= 10, v.utf8.allSatisfy(isDigit), let n = Int(v), n <= SIPMessage.maxMessageSize else {
            throw .init(400, "bad Content-Length \(v)", header: "Content-Length")
        }
        return n
    }

    /// The structural checks of RFC 3261 §8.2 that do not depend on what the receiver supports.
    func validate() throws(SIPParseError) {
        for name in Self.singleValued {
            var count = 0
            for h in headers where h.name == name { count += 1 }
            guard count <= 1 else { throw .init(400, "more than one \(name.canonical)", header: name.canonical) }
        }
        for name: SIPHeaderName in [.callID, .cseq, .from, .to, .via] where self[name] == nil {
            throw .init(400, "missing \(name.canonical)", header: name.canonical)
        }
        guard let callID = self[.callID], !callID.isEmpty, !callID.contains(where: { $0 == " " || $0 == "\t" }) else {
            throw .init(400, "bad Call-ID", header: "Call-ID")
        }
        let cseq: CSeq
        do { cseq = try CSeq.parse(self[.cseq]!) } catch { throw error.inHeader("CSeq") }
        for v in values(.via) {
            do { _ = try Via.parse(v) } catch { throw error.inHeader("Via") }
        }
        do {
            _ = try NameAddress.parse(self[.from]!)
        } catch { throw error.inHeader("From") }
        do {
            _ = try NameAddress.parse(self[.to]!)
        } catch { throw error.inHeader("To") }
        for name: SIPHeaderName in [.contact, .route, .recordRoute] {
            for v in values(name) where !(name == .contact && v == "*") {
                do { _ = try NameAddress.parse(v) } catch { throw error.inHeader(name.canonical) }
            }
        }
        if let mf = self[.maxForwards] {
            guard !mf.isEmpty, mf.utf8.count <= 10, mf.utf8.allSatisfy(isDigit), let n = Int(mf), n <= 255 else {
                throw .init(400, "Max-Forwards must be 0-255", header: "Max-Forwards")
            }
        }
        if let e = self[.expires] {
            guard e.utf8.allSatisfy(isDigit), UInt32(e) != nil else { throw .init(400, "bad Expires", header: "Expires") }
        }
        if let ra = self[.retryAfter] {
            let digits = ra.prefix(while: { $0.isNumber })
            guard !digits.isEmpty, UInt32(digits) != nil else { throw .init(400, "bad Retry-After", header: "Retry-After") }
        }
        for w in values("Warning") {
            let code = w.prefix(while: { $0 != " " })
            guard code.utf8.count == 3, code.utf8.allSatisfy(isDigit) else { throw .init(400, "bad warn-code", header: "Warning") }
        }
        if let date = self[.date] {
            // rfc1123-date = wkday "," SP date1 SP time SP "GMT" (RFC 3261 §20.17)
            guard date.hasSuffix(" GMT"), date.split(separator: " ").count == 6 else {
                throw .init(400, "Date must be an RFC 1123 date in GMT", header: "Date")
            }
        }
        if let rseq = self[.rseq], UInt32(rseq) == nil { throw .init(400, "bad RSeq", header: "RSeq") }
        if let rack = self[.rack] {
            do { _ = try RAck.parse(rack) } catch { throw error.inHeader("RAck") }
        }
        switch startLine {
        case .request(let method, let uri):
            // RFC 3261 §19.1.1: headers are not allowed in a Request-URI.
            guard uri.headers == nil else { throw .init(400, "Request-URI must not contain headers") }
            guard cseq.method == method else { throw .init(400, "CSeq method \(cseq.method) does not match \(method)", header: "CSeq") }
        case .response:
            break
        }
    }
}
