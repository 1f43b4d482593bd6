// Symmetric RTP ("comedia", RFC 4961 and the NAT practice around it): send media to where
// the peer's media really comes from, not only to what its SDP said.

/// A UDP transport address as the media layer sees it: a numeric host and a port.
public struct RTPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host, as a numeric IPv4 or IPv6 string (no brackets).
    public var host: String
    /// The UDP port.
    public var port: UInt16

    /// The address `host`:`port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with IPv6 hosts in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A set of RTP payload types (0...127) as a bitmap: membership tests never allocate.
public struct RTPPayloadTypeSet: Sendable, Hashable, ExpressibleByArrayLiteral {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    /// The set of `payloadTypes` (values above 127 are ignored).
    public init<S: Sequence>(_ payloadTypes: S) where S.Element == UInt8 {
        for payloadType in payloadTypes { insert(payloadType) }
    }

    /// The set of the listed payload types.
    public init(arrayLiteral elements: UInt8...) { self.init(elements) }

    /// Adds `payloadType` (ignored above 127).
    public mutating func insert(_ payloadType: UInt8) {
        if payloadType < 64 { low |= 1 << UInt64(payloadType) } else if payloadType < 128 { high |= 1 << UInt64(payloadType - 64) }
    }

    /// True when `payloadType` is in the set.
    public func contains(_ payloadType: UInt8) -> Bool {
        if payloadType < 64 { return low & (1 << UInt64(payloadType)) != 0 }
        if payloadType < 128 { return high & (1 << UInt64(payloadType - 64)) != 0 }
        return false
    }

    /// True when no payload type is in the set.
    public var isEmpty: Bool { low == 0 && high == 0 }
}

/// Decides, per received RTP packet, whether to accept it and where to send our media.
///
/// - Before any latch, `destination` is the SDP address. A packet from the SDP address
///   latches at once; from another address it takes `packetsToLatch` packets in a row
///   (same address, same SSRC, allowed payload types) and the earlier ones are dropped.
/// - Once latched, packets from the latched address are accepted. Another address can
///   take over only after the latched one has been silent for `silenceBeforeRelatch`
///   seconds, and again only after `packetsToLatch` packets in a row; while the latched
///   address is active, packets from elsewhere are dropped (no flapping, no hijack by a
///   stray stream).
///
/// One instance per RTP socket (use a second one for a separate RTCP port). Time comes in
/// as `now` (seconds, monotonic).
public struct SymmetricRTPLatch: Sendable, Equatable {
    /// Settings for the latch.
    public struct Configuration: Sendable, Equatable, Hashable {
        /// Packets in a row from a new address needed to (re-)latch. Default 3.
        public var packetsToLatch: Int
        /// Seconds the latched address must have been silent before another can take over.
        /// Default 2.
        public var silenceBeforeRelatch: Double
        /// Whether a new address must carry the SSRC already seen to take over. Default true;
        /// false lets a failover to another media server (new SSRC) re-latch after silence.
        public var requireSameSSRCToRelatch: Bool

        /// A configuration with the given settings.
        public init(packetsToLatch: Int = 3, silenceBeforeRelatch: Double = 2, requireSameSSRCToRelatch: Bool = true) {
            self.packetsToLatch = max(packetsToLatch, 1)
            self.silenceBeforeRelatch = silenceBeforeRelatch
            self.requireSameSSRCToRelatch = requireSameSSRCToRelatch
        }
    }

    /// Why a packet was dropped.
    public enum DropReason: Sendable, Equatable, Hashable {
        /// Its payload type was not negotiated.
        case unexpectedPayloadType(UInt8)
        /// It came from a new address with an SSRC other than the stream's.
        case unexpectedSSRC(UInt32)
        /// It came from a new address that has sent `count` of the packets needed so far.
        case learning(RTPAddress, count: Int)
        /// It came from a new address while the latched one is still active.
        case latchedAddressActive(RTPAddress)
    }

    /// The decision for one packet.
    public enum Decision: Sendable, Equatable, Hashable {
        /// Accept the packet; nothing changed.
        case accept
        /// Accept the packet; from now on send to this address (it is the new `destination`).
        case latch(RTPAddress)
        /// Drop the packet.
        case drop(DropReason)

        /// True when the packet should go on to the media path.
        public var isAccepted: Bool {
            if case .drop = self { return false }
            return true
        }
    }

    /// The settings in force.
    public let configuration: Configuration
    /// The address the SDP gave (c= and m= port), if any.
    public private(set) var signalledAddress: RTPAddress?
    /// Payload types accepted (empty: any).
    public private(set) var payloadTypes: RTPPayloadTypeSet
    /// The address latched onto, nil before the first latch.
    public private(set) var latchedAddress: RTPAddress?
    /// The SSRC of the stream (given, or learned at the first latch).
    public private(set) var expectedSSRC: UInt32?
    /// When the latched address was last heard (seconds).
    public private(set) var lastHeard: Double?
    /// The address trying to take over: its SSRC and packets in a row so far.
    private var candidate: (address: RTPAddress, ssrc: UInt32, count: Int)?

    /// A latch for a stream the SDP placed at `signalledAddress`, carrying `payloadTypes`
    /// (include telephone-event and comfort noise), with an optional known SSRC.
    public init(
        signalledAddress: RTPAddress?, payloadTypes: RTPPayloadTypeSet = [], expectedSSRC: UInt32? = nil,
        configuration: Configuration = Configuration()
    ) {
        self.configuration = configuration
        self.signalledAddress = signalledAddress
        self.payloadTypes = payloadTypes
        self.expectedSSRC = expectedSSRC
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.configuration == rhs.configuration && lhs.signalledAddress == rhs.signalledAddress
            && lhs.payloadTypes == rhs.payloadTypes && lhs.latchedAddress == rhs.latchedAddress
            && lhs.expectedSSRC == rhs.expectedSSRC && lhs.lastHeard == rhs.lastHeard
            && lhs.candidate?.address == rhs.candidate?.address && lhs.candidate?.ssrc == rhs.candidate?.ssrc
            && lhs.candidate?.count == rhs.candidate?.count
    }

    /// Where to send our media: the latched address, else the SDP address.
    public var destination: RTPAddress? { latchedAddress ?? signalledAddress }

    /// Judges one valid RTP packet from `source` with `ssrc` and `payloadType` at `now`.
    public mutating func packetReceived(from source: RTPAddress, ssrc: UInt32, payloadType: UInt8, now: Double) -> Decision {
        guard payloadTypes.isEmpty || payloadTypes.contains(payloadType) else {
            return .drop(.unexpectedPayloadType(payloadType))
        }
        if let latched = latchedAddress {
            if source == latched {
                lastHeard = now
                candidate = nil
                // The same address may switch SSRC (a new stream from the same sender).
                expectedSSRC = ssrc
                return .accept
            }
            if configuration.requireSameSSRCToRelatch, let expected = expectedSSRC, ssrc != expected {
                return .drop(.unexpectedSSRC(ssrc))
            }
            guard now - (lastHeard ?? -Double.infinity) >= configuration.silenceBeforeRelatch else {
                candidate = nil
                return .drop(.latchedAddressActive(latched))
            }
            return learn(source, ssrc: ssrc, now: now)
        }
        if let expected = expectedSSRC, ssrc != expected {
            return .drop(.unexpectedSSRC(ssrc))
        }
        if source == signalledAddress { return latch(source, ssrc: ssrc, now: now) }
        return learn(source, ssrc: ssrc, now: now)
    }

    /// Counts a packet from a would-be address and latches once enough came in a row.
    private mutating func learn(_ source: RTPAddress, ssrc: UInt32, now: Double) -> Decision {
        var count = 1
        if let candidate, candidate.address == source, candidate.ssrc == ssrc { count = candidate.count + 1 }
        guard count >= configuration.packetsToLatch else {
            candidate = (source, ssrc, count)
            return .drop(.learning(source, count: count))
        }
        return latch(source, ssrc: ssrc, now: now)
    }

    private mutating func latch(_ source: RTPAddress, ssrc: UInt32, now: Double) -> Decision {
        latchedAddress = source
        expectedSSRC = ssrc
        lastHeard = now
        candidate = nil
        return .latch(source)
    }

    /// New SDP from the peer (re-INVITE, UPDATE): starts over with the new address and
    /// payload types; any latch and learned SSRC are forgotten.
    public mutating func signallingChanged(address: RTPAddress?, payloadTypes: RTPPayloadTypeSet) {
        signalledAddress = address
        self.payloadTypes = payloadTypes
        latchedAddress = nil
        expectedSSRC = nil
        lastHeard = nil
        candidate = nil
    }
}
