import CLinux

/// When to hand freed heap back to the system. glibc keeps what a flood of transactions
/// allocated (measured: 20,000 INVITEs left RSS at 356 MB after every transaction had
/// ended; malloc_trim brought it to 135 MB, and a second flood did not grow it further, so
/// the memory was free, only kept). A plain value: the transaction count in, a yes out.
struct HeapTrimPolicy: Sendable {
    /// Transactions alive at the highest point since the last trim.
    private(set) var peak = 0
    /// Below this peak there is too little to gain to bother. Default 512.
    let minimumPeak: Int

    init(minimumPeak: Int = 512) {
        self.minimumPeak = minimumPeak
    }

    /// Feeds the count of live transactions; true when most of a large peak has ended and
    /// the heap should be trimmed now.
    mutating func shouldTrim(liveTransactions count: Int) -> Bool {
        peak = max(peak, count)
        guard peak >= minimumPeak, count <= peak / 4 else { return false }
        peak = count
        return true
    }
}

/// Returns free heap pages to the system (glibc `malloc_trim`). Costs a few milliseconds on
/// a large heap, on the SIP loop, once per flood.
func trimHeap() {
    _ = malloc_trim(0)
}
