/// Base64 (RFC 4648): the standard alphabet (§4) for SDES keys and the WebSocket handshake,
/// the URL and file name safe one (§5) for room and page tokens. No line breaks, no white
/// space, in either direction.
public enum Base64 {
    /// The 64 characters a value is written with.
    public enum Alphabet: Sendable {
        /// RFC 4648 §4: `A-Z a-z 0-9 + /`.
        case standard
        /// RFC 4648 §5: `A-Z a-z 0-9 - _` (URL and file name safe).
        case urlSafe
    }

    /// How `decode` treats the `=` padding (RFC 4648 §3.2).
    public enum Padding: Sendable {
        /// It must be there: the length is a multiple of 4.
        case required
        /// It may be there or be left off (some SDES endpoints leave it off).
        case optional
        /// It must not be there (unpadded tokens).
        case forbidden
    }

    /// `bytes` in base64; `padded` false leaves the `=` off (RFC 4648 §3.2).
    public static func encode(
        _ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard, padded: Bool = true
    ) -> String {
        let characters = alphabet == .standard ? standardCharacters : urlSafeCharacters
        let bytes = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i]), b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0,
                b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(characters[Int(n >> 18 & 63)])
            out.append(characters[Int(n >> 12 & 63)])
            if i + 1 < bytes.count {
                out.append(characters[Int(n >> 6 & 63)])
            } else if padded {
                out.append(UInt8(ascii: "="))
            }
            if i + 2 < bytes.count {
                out.append(characters[Int(n & 63)])
            } else if padded {
                out.append(UInt8(ascii: "="))
            }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes; nil for a character outside `alphabet`, padding that breaks
    /// the `padding` rule or is misplaced, or an impossible length. `canonical` also refuses
    /// leftover bits that are not zero (RFC 4648 §3.5), so each byte string has exactly one
    /// encoding (tokens are compared by their bytes).
    public static func decode(
        _ text: some StringProtocol, alphabet: Alphabet = .standard, padding: Padding = .optional,
        canonical: Bool = false
    ) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var pads = 0
        for c in text.utf8 {
            if c == UInt8(ascii: "=") {
                pads += 1
                continue
            }
            guard pads == 0, let value = sextet(c, alphabet) else { return nil }
            values.append(value)
        }
        guard pads <= 2, values.count % 4 != 1 else { return nil }
        switch padding {
        case .required: guard (values.count + pads) % 4 == 0 else { return nil }
        case .optional: guard pads == 0 || (values.count + pads) % 4 == 0 else { return nil }
        case .forbidden: guard pads == 0 else { return nil }
        }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (k, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * UInt32(k)) }
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            // The bits a short last group carries beyond its bytes.
            if canonical, chunk.count < 4, n & (chunk.count == 2 ? 0xFFFF : 0xFF) != 0 { return nil }
            i += 4
        }
        return out
    }

    private static let standardCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafeCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func sextet(_ c: UInt8, _ alphabet: Alphabet) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where alphabet == .standard, UInt8(ascii: "-") where alphabet == .urlSafe: 62
        case UInt8(ascii: "/") where alphabet == .standard, UInt8(ascii: "_") where alphabet == .urlSafe: 63
        default: nil
        }
    }
}
