/// RFC 2782's order of SRV records: lowest priority first; inside one priority, a weighted
/// random draw, record by record, without replacement. `random(range)` picks an integer in
/// `range` (inject a fixed sequence in tests).
public enum SRVOrdering {
    /// The usable records in the order to try them. A "." target (the service is decidedly
    /// not offered, RFC 2782) is dropped.
    public static func order(_ records: [SRVRecord], random: (ClosedRange<Int>) -> Int) -> [SRVRecord] {
        let usable = records.filter { !$0.target.isEmpty }
        var out: [SRVRecord] = []
        for priority in Set(usable.map(\.priority)).sorted() {
            // Zero weights first, as the RFC asks; the others keep their order.
            var left =
                usable.filter { $0.priority == priority && $0.weight == 0 }
                + usable.filter { $0.priority == priority && $0.weight > 0 }
            while !left.isEmpty {
                let total = left.reduce(0) { $0 + Int($1.weight) }
                // RFC 2782 draws from 0...total, which hands the first record one extra share
                // when it is not weight 0. Draw 0 only while a zero-weight record is left (its
                // "very small chance"), so the others get exactly their weight's share.
                let zeroLeft = left.first?.weight == 0
                let draw = total == 0 ? 0 : random(zeroLeft ? 0...total : 1...total)
                var sum = 0
                var pick = left.count - 1
                for (i, r) in left.enumerated() {
                    sum += Int(r.weight)
                    if sum >= draw {
                        pick = i
                        break
                    }
                }
                out.append(left.remove(at: pick))
            }
        }
        return out
    }
}
