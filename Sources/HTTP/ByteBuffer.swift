/// Bytes received and not consumed yet: `unread` is the front of the stream.
package struct ByteBuffer: Sendable {
    private var bytes: [UInt8] = []
    private var start = 0

    package init() {}

    package var count: Int { bytes.count - start }
    package var isEmpty: Bool { count == 0 }
    package var unread: ArraySlice<UInt8> { bytes[start...] }

    package mutating func append(_ data: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: data)
    }

    package mutating func consume(_ n: Int) {
        start += n
        if start >= bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 65_536)
            start = 0
        } else if start >= 16_384, start >= bytes.count / 2 {
            // Drop consumed bytes once they are the larger part, so the buffer does not grow.
            bytes.removeFirst(start)
            start = 0
        }
    }

    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: false)
        start = 0
    }
}
