/// How long `CallRecordStore` keeps ended calls' records (serve keys `callRecordRetentionDays`
/// and `maxCallRecords`, docs/operations.md). Records of calls still up are never pruned.
///
/// Pruning runs on the store's writer queue, never on the SIP loop: once when the store
/// opens, then every `interval` seconds, in chunks of `chunk` rows (one commit each) so that
/// the writes queued meanwhile wait for one chunk at most.
public struct CallRecordRetention: Sendable, Equatable {
    /// Ended records of calls that started more than this many days ago are deleted; 0
    /// keeps them whatever their age. Default 90.
    public var days: Int
    /// Beyond this many ended records the oldest are deleted; nil: no count limit. Default nil.
    public var maxRecords: Int?
    /// Seconds between prunes after the one at open. Default 3600.
    public var interval: Double
    /// Rows deleted per commit. Default 5000.
    public var chunk: Int

    public init(days: Int = 90, maxRecords: Int? = nil, interval: Double = 3600, chunk: Int = 5000) {
        self.days = days
        self.maxRecords = maxRecords
        self.interval = interval
        self.chunk = chunk
    }

    /// Keeps every record (the store's default when it is given no retention).
    public static let keepAll = CallRecordRetention(days: 0, maxRecords: nil)

    /// True when there is nothing to prune, ever.
    var keepsEverything: Bool { days <= 0 && maxRecords == nil }

    /// The `startedAt` before which ended records go, at `now`; nil: none go for their age.
    func cutoff(now: Double) -> Double? { days > 0 ? now - Double(days) * 86_400 : nil }
}
