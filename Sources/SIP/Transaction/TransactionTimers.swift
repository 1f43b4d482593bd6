/// The RFC 3261 §17 timer values (Table 4), from the three the user agent is configured with.
///
/// ```
/// T1  RTT estimate                    500 ms default
/// T2  longest non-INVITE/2xx interval 4 s
/// T4  longest a message stays in the network  5 s
/// A   INVITE retransmit (UDP)         T1, doubling             B  INVITE timeout  64*T1
/// D   wait for response retransmits   32 s UDP, 0 reliable
/// E   non-INVITE retransmit (UDP)     T1, doubling up to T2    F  non-INVITE timeout  64*T1
/// G   INVITE final retransmit (UDP)   T1, doubling up to T2    H  wait for ACK  64*T1
/// I   wait for ACK retransmits        T4 UDP, 0 reliable
/// K   wait for response retransmits   T4 UDP, 0 reliable
/// L   accepted INVITE server (RFC 6026)  64*T1                 M  accepted INVITE client (RFC 6026)  64*T1
/// ```
public struct TransactionTimers: Sendable, Equatable {
    /// RFC 3261 T1 in seconds. Default 0.5.
    public var t1: Double
    /// RFC 3261 T2 in seconds: the cap on doubling retransmission intervals. Default 4.
    public var t2: Double
    /// RFC 3261 T4 in seconds: how long a message may linger in the network. Default 5.
    public var t4: Double

    public init(t1: Double = 0.5, t2: Double = 4, t4: Double = 5) {
        self.t1 = t1
        self.t2 = t2
        self.t4 = t4
    }

    /// 64*T1: Timers B, F, H, L and M.
    var timeout: Double { 64 * t1 }
    /// Timer D: 32 s on an unreliable transport (at least 64*T1 is not required; RFC 3261 says
    /// "> 32 s"), 0 on a reliable one.
    func timerD(reliable: Bool) -> Double { reliable ? 0 : max(32, timeout) }
    /// Timers I and K: T4 on an unreliable transport, 0 on a reliable one.
    func lingerT4(reliable: Bool) -> Double { reliable ? 0 : t4 }
}

/// The timers a transaction machine asks its driver to run, by their RFC names.
enum TransactionTimer: Hashable, Sendable, CaseIterable {
    case a, b, d, e, f, g, h, i, k, l, m
}
