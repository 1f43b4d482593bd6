/// Why bytes are not a readable libpcap file, and where.
public struct PcapError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset in the file where the problem is.
    public let offset: Int
    /// What is wrong there.
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "pcap: \(reason) at byte \(offset)" }
}
