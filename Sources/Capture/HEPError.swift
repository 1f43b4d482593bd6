/// Why bytes are not a decodable HEP v3 packet, and where.
public struct HEPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset in the packet where the problem is.
    public let offset: Int
    /// What is wrong there.
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "HEP: \(reason) at byte \(offset)" }
}
