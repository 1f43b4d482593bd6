extension Crypto {
    /// Hexadecimal form of `bytes`, two digits per byte: lowercase and unseparated by default
    /// (nonces, tokens, ids); `uppercase` with `separator` ":" writes RFC 8122 fingerprints.
    public static func hex(_ bytes: some Collection<UInt8>, uppercase: Bool = false, separator: UInt8? = nil) -> String
    {
        let digits = uppercase ? upperDigits : lowerDigits
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 3)
        for (i, byte) in bytes.enumerated() {
            if i > 0, let separator { out.append(separator) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The byte of a two-digit hex pair (either case); nil for anything else, a sign included.
    public static func byte(hexPair pair: some StringProtocol) -> UInt8? {
        let utf8 = Array(pair.utf8)
        guard utf8.count == 2, let high = hexValue(utf8[0]), let low = hexValue(utf8[1]) else { return nil }
        return high << 4 | low
    }

    private static let lowerDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let upperDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
