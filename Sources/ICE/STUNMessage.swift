import Crypto
import IOCore

// A STUN message (RFC 8489 §5): a 20-octet header, then attributes.
//
//     0                   1                   2                   3
//     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |0 0|     STUN Message Type     |         Message Length        |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                         Magic Cookie                          |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                                                               |
//    |                     Transaction ID (96 bits)                  |
//    |                                                               |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The length counts the attributes only (not the header) and is a multiple of 4.
// MESSAGE-INTEGRITY (§14.5) is an HMAC-SHA1 over the message up to (not including) the
// attribute, with the length field set as if MESSAGE-INTEGRITY were the last attribute;
// FINGERPRINT (§14.7) is the CRC-32 of the message up to it, XOR 0x5354554e, and is last.

/// A STUN message as a value (RFC 8489): type, transaction ID and attributes in order.
///
/// `parse` checks every bound and every known attribute's size and throws a
/// `STUNParseError` otherwise. MESSAGE-INTEGRITY and FINGERPRINT are checked against the
/// received bytes with `verifyMessageIntegrity(_:key:)` and `verifyFingerprint(_:)`; to send
/// them, `serialized(integrityKey:fingerprint:)` computes them.
public struct STUNMessage: Sendable, Hashable {
    /// 0x2112A442 (§5).
    public static let magicCookie: UInt32 = 0x2112_A442
    /// The FINGERPRINT XOR value, "STUN" in ASCII (§14.7).
    public static let fingerprintXOR: UInt32 = 0x5354_554E
    /// The header's size in octets.
    public static let headerLength = 20

    /// Method and class.
    public var type: STUNMessageType
    /// The 96-bit transaction ID.
    public var transactionID: STUNTransactionID
    /// The attributes in wire order (after MESSAGE-INTEGRITY, only MESSAGE-INTEGRITY-SHA256
    /// and FINGERPRINT are kept: §14.5 says to ignore anything else there).
    public var attributes: [STUNAttribute]

    /// A message with `attributes` (add MESSAGE-INTEGRITY and FINGERPRINT when serializing).
    public init(type: STUNMessageType, transactionID: STUNTransactionID, attributes: [STUNAttribute] = []) {
        self.type = type
        self.transactionID = transactionID
        self.attributes = attributes
    }

    // MARK: - Reading attributes

    /// The first attribute of `type`, if any.
    public func attribute(_ type: STUNAttributeType) -> STUNAttribute? {
        attributes.first { $0.type == type }
    }

    /// USERNAME, if present.
    public var username: String? {
        for case .username(let name) in attributes { return name }
        return nil
    }

    /// PRIORITY, if present.
    public var priority: UInt32? {
        for case .priority(let value) in attributes { return value }
        return nil
    }

    /// True when USE-CANDIDATE is present.
    public var useCandidate: Bool { attributes.contains(.useCandidate) }

    /// ICE-CONTROLLING's tie-breaker, if present.
    public var iceControlling: UInt64? {
        for case .iceControlling(let tieBreaker) in attributes { return tieBreaker }
        return nil
    }

    /// ICE-CONTROLLED's tie-breaker, if present.
    public var iceControlled: UInt64? {
        for case .iceControlled(let tieBreaker) in attributes { return tieBreaker }
        return nil
    }

    /// XOR-MAPPED-ADDRESS, if present.
    public var xorMappedAddress: SocketAddress? {
        for case .xorMappedAddress(let address) in attributes { return address }
        return nil
    }

    /// ERROR-CODE, if present.
    public var errorCode: STUNErrorCode? {
        for case .errorCode(let code) in attributes { return code }
        return nil
    }

    /// True when MESSAGE-INTEGRITY is present.
    public var hasMessageIntegrity: Bool { attributes.contains { $0.type == .messageIntegrity } }

    /// True when FINGERPRINT is present.
    public var hasFingerprint: Bool { attributes.contains { $0.type == .fingerprint } }

    /// Comprehension-required attribute types (below 0x8000) this parser does not know: a
    /// request carrying any is answered 420 with UNKNOWN-ATTRIBUTES (§6.3.1).
    public var unknownComprehensionRequired: [STUNAttributeType] {
        attributes.compactMap { attribute in
            if case .other(let type, _) = attribute, type.isComprehensionRequired,
                !Self.knownButUnused.contains(type)
            {
                return type
            }
            return nil
        }
    }

    /// Comprehension-required types we understand but have no use for (long-term
    /// credentials, ALTERNATE-SERVER is optional): never reported as unknown.
    static let knownButUnused: Set<STUNAttributeType> = [.realm, .nonce, .passwordAlgorithm, .userhash]

    // MARK: - Parsing

    /// Parses one message (a whole UDP datagram).
    public static func parse(_ bytes: [UInt8]) throws(STUNParseError) -> STUNMessage {
        try parse(bytes[...])
    }

    /// Parses one message (a whole UDP datagram).
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(STUNParseError) -> STUNMessage {
        let b = bytes.startIndex
        guard bytes.count >= headerLength else { throw .truncatedHeader(length: bytes.count) }
        guard let type = STUNMessageType(wireValue: uint16(bytes, b)) else { throw .notSTUN(firstByte: bytes[b]) }
        let length = Int(uint16(bytes, b + 2))
        let cookie = uint32(bytes, b + 4)
        guard cookie == magicCookie else { throw .badMagicCookie(cookie) }
        guard length % 4 == 0 else { throw .lengthNotMultipleOfFour(length) }
        guard length == bytes.count - headerLength else {
            throw .lengthMismatch(declared: length, available: bytes.count - headerLength)
        }
        let transactionID = STUNTransactionID(bytes: bytes[(b + 8)..<(b + 20)])!

        var attributes: [STUNAttribute] = []
        var offset = headerLength
        var afterIntegrity = false
        var sawFingerprint = false
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else {
                throw .attributeBeyondMessage(type: STUNAttributeType(rawValue: 0), offset: offset)
            }
            let attributeType = STUNAttributeType(rawValue: uint16(bytes, b + offset))
            let valueLength = Int(uint16(bytes, b + offset + 2))
            let padded = (valueLength + 3) & ~3
            guard bytes.count - offset - 4 >= padded else {
                throw .attributeBeyondMessage(type: attributeType, offset: offset)
            }
            if sawFingerprint { throw .attributeAfterFingerprint(attributeType) }
            let value = bytes[(b + offset + 4)..<(b + offset + 4 + valueLength)]
            offset += 4 + padded
            if afterIntegrity && attributeType != .fingerprint && attributeType != .messageIntegritySHA256 {
                continue
            }
            let attribute = try decodeAttribute(attributeType, value, transactionID: transactionID)
            switch attributeType {
            case .messageIntegrity: afterIntegrity = true
            case .fingerprint: sawFingerprint = true
            default: break
            }
            attributes.append(attribute)
        }
        return STUNMessage(type: type, transactionID: transactionID, attributes: attributes)
    }

    private static func decodeAttribute(
        _ type: STUNAttributeType, _ value: ArraySlice<UInt8>, transactionID: STUNTransactionID
    ) throws(STUNParseError) -> STUNAttribute {
        func exactly(_ count: Int) throws(STUNParseError) {
            guard value.count == count else {
                throw .invalidAttribute(type: type, reason: "\(value.count) octets, must be \(count)")
            }
        }
        func text(max: Int) throws(STUNParseError) -> String {
            guard value.count <= max else {
                throw .invalidAttribute(type: type, reason: "\(value.count) octets, at most \(max)")
            }
            guard let string = String(validating: value, as: UTF8.self) else {
                throw .invalidAttribute(type: type, reason: "not UTF-8")
            }
            return string
        }
        let v = value.startIndex
        switch type {
        case .username:
            return .username(try text(max: 513))
        case .software:
            return .software(try text(max: 763))
        case .messageIntegrity:
            try exactly(20)
            return .messageIntegrity(Array(value))
        case .messageIntegritySHA256:
            guard value.count >= 16, value.count <= 32, value.count % 4 == 0 else {
                throw .invalidAttribute(type: type, reason: "\(value.count) octets, must be 16-32 in steps of 4")
            }
            return .messageIntegritySHA256(Array(value))
        case .fingerprint:
            try exactly(4)
            return .fingerprint(uint32(value, v))
        case .priority:
            try exactly(4)
            return .priority(uint32(value, v))
        case .useCandidate:
            try exactly(0)
            return .useCandidate
        case .iceControlling:
            try exactly(8)
            return .iceControlling(tieBreaker: uint64(value, v))
        case .iceControlled:
            try exactly(8)
            return .iceControlled(tieBreaker: uint64(value, v))
        case .xorMappedAddress:
            return .xorMappedAddress(try STUNAddress.decode(value, type: type, xor: true, transactionID: transactionID))
        case .mappedAddress:
            return .mappedAddress(try STUNAddress.decode(value, type: type, xor: false, transactionID: transactionID))
        case .errorCode:
            guard value.count >= 4 else { throw .invalidAttribute(type: type, reason: "\(value.count) octets, need 4") }
            let errorClass = Int(value[v + 2] & 0x07), number = Int(value[v + 3])
            guard (3...6).contains(errorClass), number < 100 else {
                throw .invalidAttribute(type: type, reason: "class \(errorClass) number \(number) is not 300-699")
            }
            guard value.count - 4 <= 763, let reason = String(validating: value.dropFirst(4), as: UTF8.self) else {
                throw .invalidAttribute(type: type, reason: "reason phrase is not UTF-8 of at most 763 octets")
            }
            return .errorCode(STUNErrorCode(code: errorClass * 100 + number, reasonPhrase: reason))
        case .unknownAttributes:
            guard value.count % 2 == 0 else { throw .invalidAttribute(type: type, reason: "odd length \(value.count)") }
            return .unknownAttributes(
                stride(from: v, to: value.endIndex, by: 2).map {
                    STUNAttributeType(rawValue: uint16(value, $0))
                })
        default:
            return .other(type: type, value: Array(value))
        }
    }

    // MARK: - Writing

    /// The message on the wire. With `integrityKey` a MESSAGE-INTEGRITY is appended (the key
    /// is the password for ICE's short-term credentials, RFC 8489 §9.1.1); with
    /// `fingerprint` a FINGERPRINT after it. MESSAGE-INTEGRITY or FINGERPRINT attributes in
    /// `attributes` are written as they are (with the value they hold). `padding` is the
    /// octet that fills attributes to 4 octets (0; RFC 5769's vectors use 0x20).
    public func serialized(
        integrityKey: [UInt8]? = nil, fingerprint: Bool = false, padding: UInt8 = 0
    ) throws(STUNBuildError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        Self.append16(type.wireValue, &out)
        Self.append16(0, &out)
        Self.append32(Self.magicCookie, &out)
        for index in 0..<12 { out.append(transactionID.byte(at: index)) }
        for attribute in attributes {
            try encode(attribute, into: &out, padding: padding)
        }
        if let key = integrityKey {
            Self.setLength(&out, out.count - Self.headerLength + 24)
            Self.append16(STUNAttributeType.messageIntegrity.rawValue, &out)
            Self.append16(20, &out)
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: 20))
            out.withUnsafeMutableBytes { raw in
                key.withUnsafeBytes { keyBytes in
                    Crypto.hmacSHA1(
                        key: keyBytes, data: UnsafeRawBufferPointer(rebasing: raw[0..<(start - 4)]),
                        into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
                }
            }
        }
        if fingerprint {
            Self.setLength(&out, out.count - Self.headerLength + 8)
            let crc = CRC32.checksum(out) ^ Self.fingerprintXOR
            Self.append16(STUNAttributeType.fingerprint.rawValue, &out)
            Self.append16(4, &out)
            Self.append32(crc, &out)
        }
        guard out.count - Self.headerLength <= 0xFFFF else { throw .messageTooLong(out.count) }
        Self.setLength(&out, out.count - Self.headerLength)
        return out
    }

    private func encode(_ attribute: STUNAttribute, into out: inout [UInt8], padding: UInt8) throws(STUNBuildError) {
        let type = attribute.type
        Self.append16(type.rawValue, &out)
        let lengthAt = out.count
        Self.append16(0, &out)
        let start = out.count
        switch attribute {
        case .username(let name):
            guard name.utf8.count <= 513 else { throw .valueTooLong(type: type, length: name.utf8.count) }
            out.append(contentsOf: name.utf8)
        case .software(let text):
            guard text.utf8.count <= 763 else { throw .valueTooLong(type: type, length: text.utf8.count) }
            out.append(contentsOf: text.utf8)
        case .messageIntegrity(let mac), .messageIntegritySHA256(let mac):
            out.append(contentsOf: mac)
        case .fingerprint(let value), .priority(let value):
            Self.append32(value, &out)
        case .useCandidate:
            break
        case .iceControlling(let tieBreaker), .iceControlled(let tieBreaker):
            Self.append32(UInt32(truncatingIfNeeded: tieBreaker >> 32), &out)
            Self.append32(UInt32(truncatingIfNeeded: tieBreaker), &out)
        case .xorMappedAddress(let address):
            try STUNAddress.encode(address, type: type, xor: true, transactionID: transactionID, into: &out)
        case .mappedAddress(let address):
            try STUNAddress.encode(address, type: type, xor: false, transactionID: transactionID, into: &out)
        case .errorCode(let error):
            guard error.reasonPhrase.utf8.count <= 763 else {
                throw .valueTooLong(type: type, length: error.reasonPhrase.utf8.count)
            }
            out.append(contentsOf: [0, 0, UInt8(error.code / 100), UInt8(error.code % 100)])
            out.append(contentsOf: error.reasonPhrase.utf8)
        case .unknownAttributes(let types):
            for unknown in types { Self.append16(unknown.rawValue, &out) }
        case .other(_, let value):
            out.append(contentsOf: value)
        }
        let length = out.count - start
        guard length <= 0xFFFF else { throw .valueTooLong(type: type, length: length) }
        out[lengthAt] = UInt8(length >> 8)
        out[lengthAt + 1] = UInt8(length & 0xFF)
        while out.count % 4 != 0 { out.append(padding) }
    }

    // MARK: - Checking MESSAGE-INTEGRITY and FINGERPRINT

    /// The outcome of checking a MESSAGE-INTEGRITY or FINGERPRINT against received bytes.
    public enum Check: Sendable, Hashable {
        /// The attribute is there and its value is right.
        case valid
        /// The attribute is there and its value is wrong.
        case invalid
        /// The message has no such attribute (or is not a well-formed message).
        case absent
    }

    /// Checks FINGERPRINT (§14.7) in `bytes`, a whole message: the CRC-32 of everything
    /// before it, XOR 0x5354554e. No allocation.
    public static func verifyFingerprint(_ bytes: [UInt8]) -> Check {
        guard let offset = attributeOffset(.fingerprint, in: bytes), bytes.count - offset == 8,
            uint16(bytes, offset + 2) == 4
        else { return .absent }
        let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<offset])) }
        return uint32(bytes, offset + 4) == crc ^ fingerprintXOR ? .valid : .invalid
    }

    /// Checks MESSAGE-INTEGRITY (§14.5) in `bytes`, a whole message, under `key` (for ICE,
    /// the receiver's password as UTF-8): the HMAC-SHA1 of the message up to the attribute,
    /// with the header's length as if the message ended just after MESSAGE-INTEGRITY.
    /// Compared in constant time. Allocates nothing but a stack copy of the covered octets.
    public static func verifyMessageIntegrity(_ bytes: [UInt8], key: [UInt8]) -> Check {
        guard let offset = attributeOffset(.messageIntegrity, in: bytes), bytes.count - offset >= 24,
            uint16(bytes, offset + 2) == 20
        else { return .absent }
        let ok = bytes.withUnsafeBytes { message in
            key.withUnsafeBytes { keyBytes in
                withUnsafeTemporaryAllocation(byteCount: offset + 20, alignment: 1) { scratch in
                    // The covered octets with the length adjusted, then room for the MAC.
                    scratch.copyMemory(from: UnsafeRawBufferPointer(rebasing: message[0..<offset]))
                    let adjusted = UInt16(offset - headerLength + 24)
                    scratch[2] = UInt8(adjusted >> 8)
                    scratch[3] = UInt8(adjusted & 0xFF)
                    let mac = UnsafeMutableRawBufferPointer(rebasing: scratch[offset...])
                    Crypto.hmacSHA1(
                        key: keyBytes, data: UnsafeRawBufferPointer(rebasing: scratch[0..<offset]), into: mac)
                    // Constant time over the 20 octets.
                    var difference: UInt8 = 0
                    for index in 0..<20 { difference |= mac[index] ^ message[offset + 4 + index] }
                    return difference == 0
                }
            }
        }
        return ok ? .valid : .invalid
    }

    /// The offset of the first attribute of `type` in a message, walking the attribute list
    /// with bounds checks; nil when absent or the message is malformed.
    static func attributeOffset(_ type: STUNAttributeType, in bytes: [UInt8]) -> Int? {
        guard bytes.count >= headerLength, Int(uint16(bytes, 2)) == bytes.count - headerLength else { return nil }
        var offset = headerLength
        while bytes.count - offset >= 4 {
            if uint16(bytes, offset) == type.rawValue { return offset }
            let padded = (Int(uint16(bytes, offset + 2)) + 3) & ~3
            guard bytes.count - offset - 4 >= padded else { return nil }
            offset += 4 + padded
        }
        return nil
    }

    // MARK: - Big-endian helpers (callers check bounds)

    @inline(__always)
    static func uint16<C: Collection<UInt8>>(_ bytes: C, _ offset: C.Index) -> UInt16 where C.Index == Int {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    @inline(__always)
    static func uint32<C: Collection<UInt8>>(_ bytes: C, _ offset: C.Index) -> UInt32 where C.Index == Int {
        UInt32(uint16(bytes, offset)) << 16 | UInt32(uint16(bytes, offset + 2))
    }

    @inline(__always)
    static func uint64<C: Collection<UInt8>>(_ bytes: C, _ offset: C.Index) -> UInt64 where C.Index == Int {
        UInt64(uint32(bytes, offset)) << 32 | UInt64(uint32(bytes, offset + 4))
    }

    @inline(__always)
    static func append16(_ value: UInt16, _ out: inout [UInt8]) {
        out.append(UInt8(value >> 8))
        out.append(UInt8(value & 0xFF))
    }

    @inline(__always)
    static func append32(_ value: UInt32, _ out: inout [UInt8]) {
        append16(UInt16(value >> 16), &out)
        append16(UInt16(value & 0xFFFF), &out)
    }

    static func setLength(_ out: inout [UInt8], _ length: Int) {
        out[2] = UInt8((length >> 8) & 0xFF)
        out[3] = UInt8(length & 0xFF)
    }
}
