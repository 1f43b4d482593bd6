/// The ERROR-CODE attribute's value (RFC 8489 §14.8): a code 300–699 and a reason phrase.
///
///     0                   1                   2                   3
///     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |           Reserved, should be 0         |Class|     Number    |
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |      Reason Phrase (variable)                                ..
public struct STUNErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// The code, class × 100 + number: 300–699.
    public var code: Int
    /// UTF-8 text for a human (at most 127 characters).
    public var reasonPhrase: String

    /// An error code; `code` must be 300–699.
    public init(code: Int, reasonPhrase: String) {
        precondition((300...699).contains(code), "STUN error codes are 300-699")
        self.code = code
        self.reasonPhrase = reasonPhrase
    }

    /// 400 Bad Request: malformed, or missing USERNAME / MESSAGE-INTEGRITY (RFC 8489 §9.1.3).
    public static let badRequest = STUNErrorCode(code: 400, reasonPhrase: "Bad Request")
    /// 401 Unauthorized: unknown USERNAME or a MESSAGE-INTEGRITY that does not verify.
    public static let unauthorized = STUNErrorCode(code: 401, reasonPhrase: "Unauthorized")
    /// 420 Unknown Attribute: the request holds comprehension-required attributes we lack.
    public static let unknownAttribute = STUNErrorCode(code: 420, reasonPhrase: "Unknown Attribute")
    /// 487 Role Conflict (RFC 8445 §7.3.1.1).
    public static let roleConflict = STUNErrorCode(code: 487, reasonPhrase: "Role Conflict")

    public var description: String { "\(code) \(reasonPhrase)" }
}
