// CRC-32 (ISO 3309 / ITU-T V.42, the one zlib and Ethernet use): reflected polynomial
// 0xEDB88320, initial value and final XOR 0xFFFFFFFF. STUN's FINGERPRINT (RFC 8489 §14.7) is
// this CRC of the message up to the attribute, XORed with 0x5354554e.

/// CRC-32 as RFC 1952 §8 defines it, table-driven (one 256-entry table built once).
public enum CRC32 {
    /// The 256 remainders of each byte value, for the reflected polynomial 0xEDB88320.
    static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = (crc & 1) != 0 ? (0xEDB8_8320 ^ (crc >> 1)) : (crc >> 1) }
        return crc
    }

    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
