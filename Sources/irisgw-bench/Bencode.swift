import Foundation
import Glibc
import IOCore
import SDP

/// A bencoded value (the ng control protocol's dictionary format): integers, byte strings,
/// lists and dictionaries with byte-string keys.
indirect enum Bencode: Equatable, CustomStringConvertible {
    case int(Int)
    case bytes([UInt8])
    case list([Bencode])
    case dict([String: Bencode])

    static func string(_ s: String) -> Bencode { .bytes(Array(s.utf8)) }

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    /// The value's bytes; dictionary keys in byte order, as bencoding requires.
    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    func encode(into out: inout [UInt8]) {
        switch self {
        case .int(let v):
            out += Array("i\(v)e".utf8)
        case .bytes(let b):
            out += Array("\(b.count):".utf8)
            out += b
        case .list(let items):
            out.append(UInt8(ascii: "l"))
            for item in items { item.encode(into: &out) }
            out.append(UInt8(ascii: "e"))
        case .dict(let d):
            out.append(UInt8(ascii: "d"))
            for key in d.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                Bencode.string(key).encode(into: &out)
                d[key]!.encode(into: &out)
            }
            out.append(UInt8(ascii: "e"))
        }
    }

    /// Decodes exactly one value filling `bytes`.
    static func decode(_ bytes: [UInt8]) throws -> Bencode {
        var i = 0
        let v = try decode(bytes, at: &i, depth: 0)
        guard i == bytes.count else { throw DecodeError(description: "\(bytes.count - i) bytes after the value") }
        return v
    }

    private static func decode(_ b: [UInt8], at i: inout Int, depth: Int) throws -> Bencode {
        guard depth < 64 else { throw DecodeError(description: "nested too deeply") }
        guard i < b.count else { throw DecodeError(description: "truncated") }
        switch b[i] {
        case UInt8(ascii: "i"):
            i += 1
            let n = try number(b, at: &i, until: UInt8(ascii: "e"))
            return .int(n)
        case UInt8(ascii: "l"):
            i += 1
            var items: [Bencode] = []
            while true {
                guard i < b.count else { throw DecodeError(description: "unterminated list") }
                if b[i] == UInt8(ascii: "e") { i += 1; return .list(items) }
                items.append(try decode(b, at: &i, depth: depth + 1))
            }
        case UInt8(ascii: "d"):
            i += 1
            var d: [String: Bencode] = [:]
            while true {
                guard i < b.count else { throw DecodeError(description: "unterminated dictionary") }
                if b[i] == UInt8(ascii: "e") { i += 1; return .dict(d) }
                guard case .bytes(let key) = try decode(b, at: &i, depth: depth + 1) else {
                    throw DecodeError(description: "dictionary key is not a string")
                }
                d[String(decoding: key, as: UTF8.self)] = try decode(b, at: &i, depth: depth + 1)
            }
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            let n = try number(b, at: &i, until: UInt8(ascii: ":"))
            guard n >= 0, n <= b.count - i else { throw DecodeError(description: "string runs past the end") }
            defer { i += n }
            return .bytes(Array(b[i..<(i + n)]))
        default:
            throw DecodeError(description: "unexpected byte \(b[i]) at \(i)")
        }
    }

    /// Decimal digits (an optional '-') up to `end`, which is consumed.
    private static func number(_ b: [UInt8], at i: inout Int, until end: UInt8) throws -> Int {
        var negative = false
        if i < b.count, b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var n = 0, digits = 0
        while i < b.count, b[i] != end {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]), digits < 18 else {
                throw DecodeError(description: "bad number")
            }
            n = n * 10 + Int(b[i] - UInt8(ascii: "0"))
            digits += 1
            i += 1
        }
        guard i < b.count, digits > 0 else { throw DecodeError(description: "unterminated number") }
        i += 1
        return negative ? -n : n
    }

    var stringValue: String? {
        if case .bytes(let b) = self { return String(decoding: b, as: UTF8.self) }
        return nil
    }

    subscript(key: String) -> Bencode? {
        if case .dict(let d) = self { return d[key] }
        return nil
    }

    var description: String {
        switch self {
        case .int(let v): "\(v)"
        case .bytes(let b): "\"\(String(decoding: b, as: UTF8.self))\""
        case .list(let l): "[" + l.map(\.description).joined(separator: ", ") + "]"
        case .dict(let d): "{" + d.keys.sorted().map { "\($0): \(d[$0]!)" }.joined(separator: ", ") + "}"
        }
    }
}
