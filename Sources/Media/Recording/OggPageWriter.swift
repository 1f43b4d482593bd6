/// Packs packets of one logical bitstream into Ogg pages (RFC 3533 §6). A packet never
/// spans pages here: our packets are at most `Opus.maxPacketSize` bytes (6 lacing values),
/// so a page is closed before one would not fit.
struct OggPageWriter {
    /// `header_type_flag` bits.
    struct Flags: OptionSet {
        let rawValue: UInt8
        /// The first page of the stream.
        static let beginningOfStream = Flags(rawValue: 0x02)
        /// The last page of the stream.
        static let endOfStream = Flags(rawValue: 0x04)
    }

    let serial: UInt32
    private var sequence: UInt32 = 0
    private var lacing: [UInt8] = []
    private var body: [UInt8] = []
    /// Packets in the page being built.
    private(set) var packets = 0

    init(serial: UInt32) { self.serial = serial }

    /// True when `packet` would not fit in the page being built (255 lacing values at most).
    func wouldOverflow(_ packet: Int) -> Bool { lacing.count + packet / 255 + 1 > 255 }

    /// Adds a whole packet to the page being built (close it first when `wouldOverflow`).
    mutating func add(_ packet: UnsafeBufferPointer<UInt8>) {
        // Lacing: 255 for each full 255 bytes, then the rest (0 when the size is a multiple).
        lacing.append(contentsOf: repeatElement(255, count: packet.count / 255))
        lacing.append(UInt8(packet.count % 255))
        body.append(contentsOf: packet)
        packets += 1
    }

    /// Closes the page being built, appending it to `out`: `granule` is the stream position
    /// after its last packet.
    mutating func closePage(granule: Int64, flags: Flags = [], into out: inout [UInt8]) {
        let start = out.count
        out += "OggS".utf8
        out.append(0)  // stream_structure_version
        out.append(flags.rawValue)
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: granule >> Int64(shift))) }
        for value in [serial, sequence, 0] {  // the CRC is 0 while it is computed
            for shift in stride(from: 0, to: 32, by: 8) {
                out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
            }
        }
        out.append(UInt8(lacing.count))
        out += lacing
        out += body
        let crc = out.withUnsafeBytes { OggCRC.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        for (index, shift) in [0, 8, 16, 24].enumerated() {
            out[start + 22 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(shift))
        }
        sequence &+= 1
        lacing.removeAll(keepingCapacity: true)
        body.removeAll(keepingCapacity: true)
        packets = 0
    }
}

/// Ogg's page CRC-32 (RFC 3533 §6): polynomial 0x04C11DB7 fed most significant bit first,
/// initial value 0 and no final XOR; not the reflected CRC-32 of zlib (ICE's `CRC32`).
enum OggCRC {
    static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var crc = UInt32(index) << 24
        for _ in 0..<8 { crc = (crc & 0x8000_0000) != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        return crc
    }

    /// The CRC of a page whose CRC field holds zeros.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(byte))] }
        }
        return crc
    }
}
