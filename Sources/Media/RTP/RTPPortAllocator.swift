// UDP port pairs for RTP sessions: RTP on an even port, RTCP on the next (RFC 3550 §11).

/// An RTP/RTCP port pair: `rtp` is even, `rtcp` is `rtp + 1`.
public struct RTPPortPair: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The even RTP port.
    public let rtp: UInt16
    /// The RTCP port, `rtp + 1`.
    public var rtcp: UInt16 { rtp + 1 }

    init(rtp: UInt16) { self.rtp = rtp }

    public var description: String { "\(rtp)/\(rtcp)" }
}

/// Why a port pair could not be handed out, released, or the allocator made.
public enum RTPPortAllocatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configured range holds no even port with its odd successor (or starts at 0).
    case invalidRange(lower: UInt16, upper: UInt16)
    /// Every pair is in use or in quarantine.
    case exhausted(inUse: Int, quarantined: Int)
    /// The pair released is not one this allocator handed out (or was already released).
    case notAllocated(RTPPortPair)

    public var description: String {
        switch self {
        case .invalidRange(let lower, let upper):
            return "RTP port range \(lower)...\(upper) holds no even/odd port pair"
        case .exhausted(let inUse, let quarantined):
            return "no free RTP port pair: \(inUse) in use, \(quarantined) in quarantine"
        case .notAllocated(let pair):
            return "RTP port pair \(pair) is not allocated"
        }
    }
}

/// Hands out RTP/RTCP port pairs from a range, least recently used first; a released pair
/// waits out a quarantine before reuse so late packets of an old call do not reach a new one.
///
/// Single owner: no locks inside. One thread (the media loop) owns it, or the caller wraps
/// it in its own lock or actor. Time comes in as `now` (seconds on a monotonic clock; the
/// quarantine queue assumes it never goes backwards).
public struct RTPPortAllocator: Sendable, Equatable {
    /// Settings for an allocator.
    public struct Configuration: Sendable, Equatable, Hashable {
        /// Ports that may be used, both ends included; pairs start at even ports inside it.
        /// Default 10000...20000.
        public var range: ClosedRange<UInt16>
        /// Seconds a released pair waits before it can be handed out again. Default 10.
        public var quarantine: Double
        /// Hand out a free pair at random (default true), so a prober cannot guess the next
        /// call's ports from the last one's; false hands out the least recently used first.
        public var randomOrder: Bool

        /// A configuration with `range` and `quarantine` seconds.
        public init(range: ClosedRange<UInt16> = 10000...20000, quarantine: Double = 10, randomOrder: Bool = true) {
            self.range = range
            self.quarantine = quarantine
            self.randomOrder = randomOrder
        }
    }

    private enum State: Sendable, Equatable {
        case free, inUse, quarantined
    }

    /// The settings in force.
    public let configuration: Configuration
    /// The first even RTP port of the range.
    private let firstPort: UInt16
    /// State per pair, indexed by (rtp − firstPort) / 2.
    private var states: [State]
    /// Free pair indices, oldest released first; `freeHead` skips taken ones.
    private var free: [Int]
    private var freeHead = 0
    /// Released pair indices with their release times, oldest first.
    private var quarantine: [(index: Int, releasedAt: Double)] = []
    private var quarantineHead = 0

    /// An allocator over `configuration.range`.
    public init(configuration: Configuration) throws(RTPPortAllocatorError) {
        let lower = configuration.range.lowerBound
        let upper = configuration.range.upperBound
        let first = Int(lower) + Int(lower % 2)
        guard lower > 0, first + 1 <= Int(upper) else {
            throw .invalidRange(lower: lower, upper: upper)
        }
        let count = (Int(upper) - first + 1) / 2
        self.configuration = configuration
        self.firstPort = UInt16(first)
        self.states = Array(repeating: .free, count: count)
        self.free = Array(0..<count)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.configuration == rhs.configuration && lhs.states == rhs.states
    }

    /// How many pairs the range holds.
    public var capacity: Int { states.count }
    /// How many pairs are handed out.
    public private(set) var inUseCount = 0
    /// How many released pairs are still in quarantine (as of the last call).
    public var quarantinedCount: Int { quarantine.count - quarantineHead }

    /// Hands out a free pair at `now`: one at random, or the least recently used
    /// (`randomOrder`). Either way, a released pair waits out its quarantine first.
    public mutating func allocate(now: Double) throws(RTPPortAllocatorError) -> RTPPortPair {
        releaseExpiredQuarantine(now: now)
        guard freeHead < free.count else {
            throw .exhausted(inUse: inUseCount, quarantined: quarantinedCount)
        }
        if configuration.randomOrder { free.swapAt(freeHead, Int.random(in: freeHead..<free.count)) }
        let index = free[freeHead]
        freeHead += 1
        compact()
        states[index] = .inUse
        inUseCount += 1
        return RTPPortPair(rtp: firstPort + UInt16(2 * index))
    }

    /// Takes back `pair` at `now`; it is reusable once `configuration.quarantine` seconds passed.
    public mutating func release(_ pair: RTPPortPair, now: Double) throws(RTPPortAllocatorError) {
        guard pair.rtp >= firstPort, (pair.rtp - firstPort) % 2 == 0 else { throw .notAllocated(pair) }
        let index = Int(pair.rtp - firstPort) / 2
        guard index < states.count, states[index] == .inUse else { throw .notAllocated(pair) }
        inUseCount -= 1
        if configuration.quarantine <= 0 {
            states[index] = .free
            free.append(index)
        } else {
            states[index] = .quarantined
            quarantine.append((index, now))
        }
    }

    /// True when `pair` is handed out now.
    public func isAllocated(_ pair: RTPPortPair) -> Bool {
        guard pair.rtp >= firstPort, (pair.rtp - firstPort) % 2 == 0 else { return false }
        let index = Int(pair.rtp - firstPort) / 2
        return index < states.count && states[index] == .inUse
    }

    /// Moves pairs whose quarantine ended by `now` to the end of the free list.
    private mutating func releaseExpiredQuarantine(now: Double) {
        while quarantineHead < quarantine.count,
            now - quarantine[quarantineHead].releasedAt >= configuration.quarantine
        {
            let index = quarantine[quarantineHead].index
            quarantineHead += 1
            states[index] = .free
            free.append(index)
        }
        compact()
    }

    /// Drops consumed queue heads once they outweigh the live part, keeping memory bounded.
    private mutating func compact() {
        if freeHead > 64, freeHead * 2 > free.count {
            free.removeFirst(freeHead)
            freeHead = 0
        }
        if quarantineHead > 64, quarantineHead * 2 > quarantine.count {
            quarantine.removeFirst(quarantineHead)
            quarantineHead = 0
        }
    }
}
