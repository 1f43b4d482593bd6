/// Reads the answer section of a DNS response (RFC 1035 §4.1) for the records of one type.
/// c-ares carries the queries (servers, retries, timeouts, TCP after truncation); the
/// answer's records and their TTLs are read here, the same way for every type, because
/// c-ares 1.18's own SRV and NAPTR parsers drop the TTL a cache needs.
public enum DNSMessage {
    /// The records of `type` in `bytes` (CNAMEs on the way are followed implicitly: every
    /// record of the type is taken) and the smallest TTL among the answer's records.
    /// Throws `.malformedAnswer` for a message that cannot be read, `.noData` when it holds
    /// no record of the type.
    public static func records(of type: DNSRecordType, in bytes: [UInt8]) throws(DNSFailure) -> DNSRecords {
        var reader = Reader(bytes: bytes)
        guard bytes.count >= 12 else { throw .malformedAnswer }
        let questions = reader.u16(at: 4), answers = reader.u16(at: 6)
        reader.offset = 12
        for _ in 0..<questions {
            guard reader.skipName(), reader.advance(4) else { throw .malformedAnswer }
        }
        var out: [DNSRecordData] = []
        var ttl = UInt32.max
        for _ in 0..<answers {
            guard reader.skipName(), reader.remaining >= 10 else { throw .malformedAnswer }
            let rtype = reader.u16(at: reader.offset), rclass = reader.u16(at: reader.offset + 2)
            let rttl = UInt32(reader.u16(at: reader.offset + 4)) << 16 | UInt32(reader.u16(at: reader.offset + 6))
            let length = Int(reader.u16(at: reader.offset + 8))
            reader.offset += 10
            guard reader.remaining >= length else { throw .malformedAnswer }
            let start = reader.offset, end = start + length
            defer { reader.offset = end }
            guard rclass == 1 else { continue }  // IN only
            // RFC 2181 §8: a TTL with the top bit set counts as zero.
            let recordTTL = rttl & 0x8000_0000 != 0 ? 0 : rttl
            if rtype == DNSRecordType.cname.rawValue { ttl = min(ttl, recordTTL) }
            guard rtype == type.rawValue else { continue }
            ttl = min(ttl, recordTTL)
            switch type {
            case .a:
                guard length == 4 else { throw .malformedAnswer }
                out.append(.a(bytes[start..<end].map(String.init).joined(separator: ".")))
            case .aaaa:
                guard length == 16 else { throw .malformedAnswer }
                out.append(.aaaa(ipv6Text(Array(bytes[start..<end]))))
            case .srv:
                guard length >= 7 else { throw .malformedAnswer }
                var r = Reader(bytes: bytes, offset: start + 6)
                guard let target = r.readName(), r.offset <= end else { throw .malformedAnswer }
                out.append(
                    .srv(
                        SRVRecord(
                            priority: r.u16(at: start), weight: r.u16(at: start + 2), port: r.u16(at: start + 4),
                            target: target)))
            case .naptr:
                var r = Reader(bytes: bytes, offset: start + 4)
                guard length >= 8, let flags = r.readString(), let service = r.readString(),
                    let regexp = r.readString(),
                    let replacement = r.readName(), r.offset <= end
                else { throw .malformedAnswer }
                out.append(
                    .naptr(
                        NAPTRRecord(
                            order: r.u16(at: start), preference: r.u16(at: start + 2), flags: flags,
                            service: service, regexp: regexp, replacement: replacement)))
            case .cname:
                break
            }
        }
        guard !out.isEmpty else { throw .noData }
        return DNSRecords(out, ttl: ttl)
    }

    /// RFC 5952 text of 16 address bytes: lower case, the longest run of zero groups as "::".
    static func ipv6Text(_ b: [UInt8]) -> String {
        let groups = (0..<8).map { UInt16(b[2 * $0]) << 8 | UInt16(b[2 * $0 + 1]) }
        var bestStart = -1, bestLength = 0, runStart = -1
        for i in 0...8 {
            if i < 8 && groups[i] == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength && i - runStart >= 2 { bestStart = runStart; bestLength = i - runStart }
                runStart = -1
            }
        }
        func hex(_ range: Range<Int>) -> String { range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
        guard bestStart >= 0 else { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }

    /// A cursor over the message. Names may point backwards (compression, RFC 1035 §4.1.4).
    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }

        func u16(at i: Int) -> UInt16 {
            guard i + 1 < bytes.count else { return 0 }
            return UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
        }

        mutating func advance(_ n: Int) -> Bool {
            guard remaining >= n else { return false }
            offset += n
            return true
        }

        mutating func skipName() -> Bool {
            while offset < bytes.count {
                let len = bytes[offset]
                if len & 0xC0 == 0xC0 { return advance(2) }
                guard len & 0xC0 == 0 else { return false }
                offset += 1
                if len == 0 { return true }
                guard advance(Int(len)) else { return false }
            }
            return false
        }

        /// The name at the cursor, without a trailing dot ("" for the root); the cursor moves
        /// past it (past the first pointer when compressed).
        mutating func readName() -> String? {
            var labels: [String] = []
            var at = offset, jumps = 0, total = 0
            var end: Int?
            while true {
                guard at < bytes.count else { return nil }
                let len = Int(bytes[at])
                if len & 0xC0 == 0xC0 {
                    guard at + 1 < bytes.count, jumps < 32 else { return nil }
                    if end == nil { end = at + 2 }
                    at = (len & 0x3F) << 8 | Int(bytes[at + 1])
                    jumps += 1
                    continue
                }
                guard len & 0xC0 == 0 else { return nil }
                if len == 0 {
                    offset = end ?? at + 1
                    return labels.joined(separator: ".").lowercased()
                }
                guard at + 1 + len <= bytes.count else { return nil }
                total += len + 1
                guard total <= 255 else { return nil }
                labels.append(String(decoding: bytes[(at + 1)...(at + len)], as: UTF8.self))
                at += 1 + len
            }
        }

        /// A <character-string> (a length byte and that many bytes).
        mutating func readString() -> String? {
            guard offset < bytes.count else { return nil }
            let len = Int(bytes[offset])
            guard offset + 1 + len <= bytes.count else { return nil }
            let s = String(decoding: bytes[(offset + 1)..<(offset + 1 + len)], as: UTF8.self)
            offset += 1 + len
            return s
        }
    }
}
