import IOCore

/// What the source policy needs of an address: equality as the same endpoint, and the host
/// alone (RTCP may come from another port of the peer's host).
public protocol MediaSourceAddress: Equatable, Sendable {
    /// True when both name the same host, whatever the ports.
    func isSameHost(as other: Self) -> Bool
}

extension SocketEndpoint: MediaSourceAddress {}

extension SocketAddress: MediaSourceAddress {
    public func isSameHost(as other: SocketAddress) -> Bool { host == other.host }
}

/// Settings for an `RTPSourcePolicy` (the same for every address type).
public struct RTPSourcePolicyConfiguration: Sendable, Equatable, Hashable {
    /// Packets in a row from one new address, with one SSRC, needed to latch it. Default 3.
    public var packetsToLatch: Int
    /// Seconds after the first packet following an offer/answer during which an address
    /// other than the SDP's may latch. Default 5.
    public var learningWindow: Double

    /// A configuration with the given settings.
    public init(packetsToLatch: Int = 3, learningWindow: Double = 5) {
        self.packetsToLatch = max(packetsToLatch, 1)
        self.learningWindow = max(learningWindow, 0)
    }

    /// RTCP's: one packet latches, and only from the host the RTP comes from (the caller
    /// says so through `eligible`), since reports come seconds apart.
    public static let rtcp = RTPSourcePolicyConfiguration(packetsToLatch: 1)
}

/// Which sources may speak into one plain RTP or RTCP socket, and where our packets go
/// (docs/media.md, "Who may send media"). One instance per socket; a plain struct that takes
/// packets and times and returns decisions, so it is tested as tables with no socket.
///
/// - Before the peer has sent, our packets go to the address its SDP gave.
/// - Packets from the SDP address are accepted and latch at once (the signalling named it).
/// - Another address (the peer behind a NAT, whose SDP names an address it never sends from)
///   can latch only while nothing has come from the peer since the last offer/answer, within
///   `learningWindow` seconds of the first packet after it, and only after `packetsToLatch`
///   packets in a row from it with one SSRC. The packets before that are dropped.
/// - Once the peer has been heard (from the SDP address or the latched one), everything from
///   any other address is dropped until the next offer/answer: a silent peer (hold, VAD) does
///   not reopen the latch, and a stranger cannot take the call's audio (rtpengine's strict
///   source; FreeSWITCH likewise learns only in the first seconds).
///
/// Nothing here allocates: it runs for every packet.
public struct RTPSourcePolicy<Address: MediaSourceAddress>: Sendable {
    /// Settings for the policy.
    public typealias Configuration = RTPSourcePolicyConfiguration

    /// Why a packet was dropped.
    public enum DropReason: Sendable, Equatable, Hashable {
        /// A new address that has sent `count` of the packets in a row needed to latch.
        case learning(count: Int)
        /// The peer has been heard since the offer/answer: no other address may speak.
        case notThePeer
        /// The learning window after the offer/answer has passed.
        case windowClosed
        /// A packet that may not latch a new address (a payload type the SDP did not give,
        /// RTCP from another host than the RTP's).
        case ineligible
    }

    /// The decision for one packet.
    public enum Decision: Sendable, Equatable, Hashable {
        /// Accept the packet; nothing changed.
        case accept
        /// Accept the packet; its source is now `destination`.
        case latched
        /// Drop the packet: do not play, relay, count, decode or tap it.
        case drop(DropReason)
    }

    /// The settings in force.
    public let configuration: Configuration
    /// The address the SDP gave (c= and the m= port, or RTCP's), if any.
    public private(set) var signalledAddress: Address?
    /// The address latched onto, nil before the first latch.
    public private(set) var latchedAddress: Address?
    /// Whether the peer (the SDP address or the latched one) has sent since the offer/answer.
    public private(set) var peerHeard = false
    /// Whether the SDP address itself has ever sent (it stays the same across offers/answers):
    /// a peer that is not behind a NAT never needs another address learned.
    public private(set) var signalledHeard = false
    /// When the first packet after the offer/answer came (the learning window's start).
    private var windowStart: Double?
    /// The address trying to latch: its SSRC and packets in a row so far.
    private var candidate: (address: Address, ssrc: UInt32, count: Int)?

    /// A policy for a socket whose peer the SDP placed at `signalledAddress` (nil until the
    /// SDP is known: a leg drops everything before that, so no packet reaches the policy).
    public init(signalledAddress: Address? = nil, configuration: Configuration = Configuration()) {
        self.signalledAddress = signalledAddress
        self.configuration = configuration
    }

    /// Where to send: the latched address, else the SDP address.
    public var destination: Address? { latchedAddress ?? signalledAddress }

    /// Judges one packet from `source` carrying `ssrc` at `now` (seconds, monotonic).
    /// `eligible`: whether this packet may count toward latching a new address.
    @inline(__always)
    public mutating func packetReceived(
        from source: Address, ssrc: UInt32, eligible: Bool = true, now: Double
    ) -> Decision {
        if let latched = latchedAddress, source == latched {
            peerHeard = true
            return .accept
        }
        if let signalled = signalledAddress, source == signalled {
            peerHeard = true
            signalledHeard = true
            candidate = nil
            if windowStart == nil { windowStart = now }
            latchedAddress = source
            return .latched
        }
        return stranger(source, ssrc: ssrc, eligible: eligible, now: now)
    }

    /// A packet from neither the SDP address nor the latched one.
    private mutating func stranger(_ source: Address, ssrc: UInt32, eligible: Bool, now: Double) -> Decision {
        guard !peerHeard, !signalledHeard else { return .drop(.notThePeer) }
        guard eligible else { return .drop(.ineligible) }
        let start = windowStart ?? now
        windowStart = start
        guard now - start <= configuration.learningWindow else { return .drop(.windowClosed) }
        var count = 1
        if let candidate, candidate.address == source, candidate.ssrc == ssrc { count = candidate.count + 1 }
        guard count >= configuration.packetsToLatch else {
            candidate = (source, ssrc, count)
            return .drop(.learning(count: count))
        }
        candidate = nil
        latchedAddress = source
        peerHeard = true
        return .latched
    }

    /// An offer/answer: the peer's SDP names `address`. A new window opens in which another
    /// address may latch (a NATed peer's mapping may have moved); the latch is kept when the
    /// address is the same, so our packets keep going where the peer really is until it says
    /// otherwise. A peer already heard at that same SDP address gets no window: it is not
    /// behind a NAT, and a hold (a silent peer) must not let a stranger in.
    public mutating func signallingChanged(address: Address?) {
        if address != signalledAddress {
            signalledAddress = address
            latchedAddress = nil
            signalledHeard = false
        }
        peerHeard = false
        windowStart = nil
        candidate = nil
    }
}
