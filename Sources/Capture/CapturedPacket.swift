import IOCore

/// The transport a captured payload travelled on.
public enum CapturedProtocol: Sendable, Hashable {
    case udp, tcp

    /// The IP protocol number (RFC 790 / IANA): 17 for UDP, 6 for TCP.
    public var ipProtocolNumber: UInt8 {
        switch self {
        case .udp: 17
        case .tcp: 6
        }
    }

    /// The transport for an IP protocol number; nil for anything but UDP and TCP.
    public init?(ipProtocolNumber: UInt8) {
        switch ipProtocolNumber {
        case 17: self = .udp
        case 6: self = .tcp
        default: return nil
        }
    }
}

/// One packet to write: the transport payload with the addresses it travelled between.
public struct CapturedPacket: Sendable, Equatable {
    /// Seconds since 1970 (UTC).
    public var time: Double
    public var source: SocketAddress
    public var destination: SocketAddress
    public var transport: CapturedProtocol
    /// The UDP or TCP payload (a SIP message, an RTP packet), without any header.
    public var payload: [UInt8]

    public init(
        time: Double, source: SocketAddress, destination: SocketAddress, transport: CapturedProtocol, payload: [UInt8]
    ) {
        self.time = time
        self.source = source
        self.destination = destination
        self.transport = transport
        self.payload = payload
    }
}
