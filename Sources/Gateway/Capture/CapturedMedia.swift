import IOCore

/// A session's captured RTP and RTCP, packed: each packet's bytes after a 12-byte header
/// (time, address pair, length) in chunks of about `chunkBytes`, its addresses in a small
/// table (a call's media runs between few pairs). What it holds is counted as the chunks'
/// whole allocations, headers and unused tails included, and the table's entries, so a
/// bound on `heldBytes` bounds the memory the packets take, not only their payload.
///
/// A snapshot (a copy of the value) shares the chunks; the next append copies at most the
/// last chunk.
struct CapturedMedia: Sendable {
    /// One packet as captured (RTP or RTCP, plain).
    struct Record: Sendable {
        var time: Double
        var source: SocketAddress
        var destination: SocketAddress
        var bytes: ArraySlice<UInt8>
    }

    struct Pair: Hashable, Sendable {
        var source: SocketAddress
        var destination: SocketAddress
    }

    static let chunkBytes = 16 << 10
    /// Per packet: time (8), pair index (2), length (2).
    static let headerBytes = 12
    /// What an array's allocation carries besides its elements (Swift's header and
    /// malloc's own word), counted with each chunk.
    static let allocationOverhead = 48
    /// A pair's table entry: two addresses, their host strings and the table's slot.
    static let pairBytes = 2 * MemoryLayout<SocketAddress>.stride + 96
    /// Address pairs one capture keeps; packets between further pairs are dropped.
    static let maxPairs = 64

    private(set) var chunks: [[UInt8]] = []
    private(set) var pairs: [Pair] = []
    /// Packets held.
    private(set) var count = 0
    /// Memory held: chunk allocations and pair entries.
    private(set) var heldBytes = 0

    /// What holding one more packet of `length` bytes between `pair` adds to `heldBytes`:
    /// 0 when it fits the last chunk and the pair is known; nil when it cannot be held at
    /// all (too long for the header's length, or one pair too many).
    func cost(length: Int, pair: Pair) -> Int? {
        guard length <= Int(UInt16.max) else { return nil }
        var cost = 0
        if !pairs.contains(pair) {
            guard pairs.count < Self.maxPairs else { return nil }
            cost += Self.pairBytes
        }
        let need = Self.headerBytes + length
        if let last = chunks.last, last.capacity - last.count >= need { return cost }
        return cost + Self.chunkSize(for: need) + Self.allocationOverhead
    }

    private static func chunkSize(for need: Int) -> Int { max(chunkBytes, need) }

    /// Appends one packet; `cost(length:pair:)` said it may be held.
    mutating func append(time: Double, pair: Pair, bytes: UnsafeRawBufferPointer) {
        let index: Int
        if let i = pairs.lastIndex(of: pair) {
            index = i
        } else {
            pairs.append(pair)
            heldBytes += Self.pairBytes
            index = pairs.count - 1
        }
        let need = Self.headerBytes + bytes.count
        if chunks.isEmpty || chunks[chunks.count - 1].capacity - chunks[chunks.count - 1].count < need {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(Self.chunkSize(for: need))
            chunks.append(chunk)
            heldBytes += Self.chunkSize(for: need) + Self.allocationOverhead
        }
        let last = chunks.count - 1
        let t = time.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) {
            chunks[last].append(UInt8(truncatingIfNeeded: t >> UInt64(shift)))
        }
        chunks[last].append(UInt8(truncatingIfNeeded: index))
        chunks[last].append(UInt8(truncatingIfNeeded: index >> 8))
        chunks[last].append(UInt8(truncatingIfNeeded: bytes.count))
        chunks[last].append(UInt8(truncatingIfNeeded: bytes.count >> 8))
        chunks[last].append(contentsOf: bytes)
        count += 1
    }

    /// Every packet, in the order captured.
    func forEach(_ body: (Record) throws -> Void) rethrows {
        try forEachLocation { _, chunk, offset in try body(record(chunk: chunk, offset: offset)) }
    }

    /// Every packet's time and where it is (for `record(chunk:offset:)`), in the order
    /// captured, without reading its bytes.
    func forEachLocation(_ body: (_ time: Double, _ chunk: Int, _ offset: Int) throws -> Void) rethrows {
        for (c, chunk) in chunks.enumerated() {
            var i = 0
            while i + Self.headerBytes <= chunk.count {
                try body(Self.time(chunk, i), c, i)
                i += Self.headerBytes + (Int(chunk[i + 10]) | Int(chunk[i + 11]) << 8)
            }
        }
    }

    /// The packet whose header starts at `offset` of chunk `chunk`.
    func record(chunk c: Int, offset i: Int) -> Record {
        let chunk = chunks[c]
        let pair = pairs[Int(chunk[i + 8]) | Int(chunk[i + 9]) << 8]
        let length = Int(chunk[i + 10]) | Int(chunk[i + 11]) << 8
        let start = i + Self.headerBytes
        return Record(
            time: Self.time(chunk, i), source: pair.source, destination: pair.destination,
            bytes: chunk[start..<start + length])
    }

    private static func time(_ chunk: [UInt8], _ i: Int) -> Double {
        var t: UInt64 = 0
        for k in 0..<8 { t |= UInt64(chunk[i + k]) << UInt64(8 * k) }
        return Double(bitPattern: t)
    }

    /// Every packet as a list (tests, small captures).
    var records: [Record] {
        var out: [Record] = []
        out.reserveCapacity(count)
        forEach { out.append($0) }
        return out
    }
}
