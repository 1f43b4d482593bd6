import Crypto

/// The 96-bit transaction ID of a STUN message (RFC 8489 §5, §6): chosen at random by the
/// requester, echoed in the response. Stored inline (no allocation).
public struct STUNTransactionID: Sendable, Hashable, CustomStringConvertible {
    /// Octets 0–3.
    var high: UInt32
    /// Octets 4–11.
    var low: UInt64

    /// The ID from exactly 12 octets; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var high: UInt32 = 0, low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 4 { high = high << 8 | UInt32(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh ID from the CSPRNG (RFC 8489 §6: uniformly and randomly chosen).
    public static func random() -> STUNTransactionID {
        STUNTransactionID(bytes: Crypto.randomBytes(count: 12))!
    }

    /// The 12 octets, in wire order.
    public var bytes: [UInt8] {
        (0..<12).map(byte(at:))
    }

    /// Octet `index` (0..<12) in wire order.
    @inline(__always)
    func byte(at index: Int) -> UInt8 {
        index < 4
            ? UInt8(truncatingIfNeeded: high >> (24 - 8 * UInt32(index)))
            : UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index - 4)))
    }

    /// 24 hexadecimal digits.
    public var description: String { Crypto.hex(bytes) }
}
