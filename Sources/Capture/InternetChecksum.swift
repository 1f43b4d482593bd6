/// The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of
/// 16-bit big-endian words, an odd last byte padded with a zero byte.
struct InternetChecksum {
    private var sum: UInt64 = 0
    /// A byte left over from an odd-length `add`, paired with the next byte added.
    private var pending: UInt8?

    init() {}

    mutating func add<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        var iterator = bytes.makeIterator()
        if let high = pending {
            guard let low = iterator.next() else { return }
            sum += UInt64(high) << 8 | UInt64(low)
            pending = nil
        }
        while let high = iterator.next() {
            guard let low = iterator.next() else {
                pending = high
                return
            }
            sum += UInt64(high) << 8 | UInt64(low)
        }
    }

    mutating func add(_ word: UInt16) { add([UInt8(word >> 8), UInt8(word & 0xFF)]) }

    mutating func add(_ word: UInt32) {
        add(UInt16(word >> 16))
        add(UInt16(word & 0xFFFF))
    }

    /// The checksum to store in the header (the field was zero while summing).
    var value: UInt16 {
        var total = sum
        if let high = pending { total += UInt64(high) << 8 }
        while total > 0xFFFF { total = (total & 0xFFFF) + (total >> 16) }
        return ~UInt16(total)
    }
}
