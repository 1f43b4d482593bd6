// The STUN message type (RFC 8489 §5): 14 bits after two zero bits, a 12-bit method with a
// 2-bit class interleaved at bits 4 and 8.
//
//     0                 1
//     2  3  4 5 6 7 8 9 0 1 2 3 4 5
//    +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
//    |M |M |M|M|M|C|M|M|M|C|M|M|M|M|
//    |11|10|9|8|7|1|6|5|4|0|3|2|1|0|
//    +--+--+-+-+-+-+-+-+-+-+-+-+-+-+

/// The class of a STUN message (RFC 8489 §5): the C1 C0 bits of the type.
public enum STUNClass: UInt8, Sendable, Hashable, CaseIterable {
    /// 0b00: a request, answered with a success or error response.
    case request = 0b00
    /// 0b01: an indication, never answered.
    case indication = 0b01
    /// 0b10: a success response.
    case successResponse = 0b10
    /// 0b11: an error response (it carries ERROR-CODE).
    case errorResponse = 0b11
}

/// A STUN method (RFC 8489 §18.2): 12 bits. ICE uses Binding only.
public struct STUNMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 12-bit method number.
    public let rawValue: UInt16

    /// A method from its number; only the low 12 bits count.
    public init(rawValue: UInt16) { self.rawValue = rawValue & 0x0FFF }

    /// Binding (0x001), the only method ICE and consent freshness use.
    public static let binding = STUNMethod(rawValue: 0x001)

    public var description: String { self == .binding ? "Binding" : "method 0x\(String(rawValue, radix: 16))" }
}

/// The 14-bit message type: a method and a class (RFC 8489 §5).
public struct STUNMessageType: Sendable, Hashable, CustomStringConvertible {
    /// The method (Binding for ICE).
    public var method: STUNMethod
    /// Request, indication, success or error response.
    public var messageClass: STUNClass

    /// A type from its method and class.
    public init(method: STUNMethod, messageClass: STUNClass) {
        self.method = method
        self.messageClass = messageClass
    }

    /// A Binding request (0x0001).
    public static let bindingRequest = STUNMessageType(method: .binding, messageClass: .request)
    /// A Binding success response (0x0101).
    public static let bindingSuccessResponse = STUNMessageType(method: .binding, messageClass: .successResponse)
    /// A Binding error response (0x0111).
    public static let bindingErrorResponse = STUNMessageType(method: .binding, messageClass: .errorResponse)

    /// The type from the 16-bit field; nil when either of the two top bits is set (not STUN).
    public init?(wireValue value: UInt16) {
        guard value & 0xC000 == 0 else { return nil }
        let method = (value & 0x000F) | ((value >> 1) & 0x0070) | ((value >> 2) & 0x0F80)
        let classBits = UInt8(((value >> 4) & 0x1) | ((value >> 7) & 0x2))
        self.init(method: STUNMethod(rawValue: method), messageClass: STUNClass(rawValue: classBits)!)
    }

    /// The 16-bit field as sent (the top two bits zero).
    public var wireValue: UInt16 {
        let m = method.rawValue, c = UInt16(messageClass.rawValue)
        return (m & 0x000F) | ((c & 0x1) << 4) | ((m & 0x0070) << 1) | ((c & 0x2) << 7) | ((m & 0x0F80) << 2)
    }

    public var description: String {
        switch messageClass {
        case .request: "\(method) request"
        case .indication: "\(method) indication"
        case .successResponse: "\(method) success response"
        case .errorResponse: "\(method) error response"
        }
    }
}
