/// A first-in first-out queue with O(1) removal at the front: the commands in flight, whose
/// replies come back in the order they were sent. Taken slots are cleared at once (they hold
/// completions and what those capture) and the storage is compacted now and then.
struct RedisFIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        defer { storage[head] = nil; head += 1; compact() }
        return storage[head]
    }

    /// Takes out the first element that matches (a command whose deadline passed).
    mutating func remove(where matches: (Element) -> Bool) -> Element? {
        guard let i = storage[head...].firstIndex(where: { $0.map(matches) ?? false }) else { return nil }
        return storage.remove(at: i)
    }

    /// Takes out everything, in order.
    mutating func removeAll() -> [Element] {
        defer { storage = []; head = 0 }
        return storage[head...].compactMap { $0 }
    }

    private mutating func compact() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
