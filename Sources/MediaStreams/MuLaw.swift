/// G.711 mu-law (ITU-T G.711, the bias-0x84 segment coding SpanDSP and Twilio use), in Swift
/// so this module needs no codec library; the tests check it against SpanDSP's, code for code.
public enum MuLaw {
    private static let bias: Int32 = 0x84

    /// One sample to its mu-law byte.
    public static func encode(_ sample: Int16) -> UInt8 {
        // The magnitude plus the bias, and the mask that complements the code (and sets the sign).
        let (linear, mask): (Int32, UInt8) = sample < 0 ? (bias - Int32(sample), 0x7F) : (bias + Int32(sample), 0xFF)
        // The segment: the highest set bit above bit 7.
        let segment = Int32(31 - (linear | 0xFF).leadingZeroBitCount) - 7
        guard segment < 8 else { return 0x7F ^ mask }
        return UInt8(truncatingIfNeeded: segment << 4 | (linear >> (segment + 3)) & 0x0F) ^ mask
    }

    /// One mu-law byte to its sample.
    public static func decode(_ byte: UInt8) -> Int16 { decodeTable[Int(byte)] }

    /// `samples` as mu-law bytes.
    public static func encode(_ samples: some Collection<Int16>) -> [UInt8] { samples.map(encode) }

    /// `bytes` as samples.
    public static func decode(_ bytes: some Collection<UInt8>) -> [Int16] { bytes.map(decode) }

    private static let decodeTable: [Int16] = (0...255).map { code in
        let byte = ~UInt8(code)
        let t = ((Int32(byte & 0x0F) << 3) + bias) << Int32(byte >> 4 & 0x07)
        return Int16(byte & 0x80 != 0 ? bias - t : t - bias)
    }
}
