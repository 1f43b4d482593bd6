// SDP session descriptions (RFC 8866, which obsoletes RFC 4566) as the offer/answer value of
// RFC 3264. SIP itself never looks inside media; the session layer hands these values around.

/// An SDP session description: the session-level fields followed by zero or more media
/// descriptions (RFC 8866 §5).
///
/// ```
/// session-description = version-field origin-field session-name-field
///                       [information-field] [uri-field] *email-field *phone-field
///                       [connection-field] *bandwidth-field 1*time-description
///                       [key-field] *attribute-field *media-description
/// ```
///
/// Fields this type does not model (`i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=`, extra `t=` and
/// any unknown letter) are kept in ``otherFields`` so a description survives a round trip.
public struct SessionDescription: Sendable, Equatable {
    /// The largest body ``parse(_:)`` accepts, in bytes (64 KiB).
    public static let maximumSize = 65_536
    /// The most `m=` lines ``parse(_:)`` accepts.
    public static let maximumMediaCount = 64

    /// `v=`: the protocol version; always 0.
    public var version: Int
    /// `o=`: who created the description, and its version for offer/answer.
    public var origin: SDPOrigin
    /// `s=`: the session name ("-" or a single space when there is nothing meaningful).
    public var sessionName: String
    /// Session-level `c=`; media without their own `c=` use it.
    public var connection: SDPConnection?
    /// Session-level `b=` lines.
    public var bandwidths: [SDPBandwidth]
    /// The first `t=` line; "t=0 0" (an unbounded session) by default.
    public var timing: SDPTiming
    /// Session-level `a=` lines, in order.
    public var attributes: [SDPAttribute]
    /// The `m=` sections, in order (their position is their identity in offer/answer).
    public var media: [MediaDescription]
    /// Session-level lines kept verbatim but not interpreted, in document order.
    public var otherFields: [SDPField]

    /// A description with the given fields; the defaults are a nameless ("-"), unbounded
    /// ("t=0 0") session with no media.
    public init(
        version: Int = 0,
        origin: SDPOrigin,
        sessionName: String = "-",
        connection: SDPConnection? = nil,
        bandwidths: [SDPBandwidth] = [],
        timing: SDPTiming = SDPTiming(),
        attributes: [SDPAttribute] = [],
        media: [MediaDescription] = [],
        otherFields: [SDPField] = []
    ) {
        self.version = version
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.attributes = attributes
        self.media = media
        self.otherFields = otherFields
    }

    // MARK: Offer/answer helpers

    /// A description of one stream offered or answered from `host` (IPv4 or IPv6 literal):
    /// the origin and the session-level connection both name it.
    public static func single(_ media: MediaDescription, host: String, sessionID: String, version: UInt64,
                              username: String = "-", sessionName: String = "-") -> SessionDescription {
        let connection: SDPConnection = host.contains(":") ? .ip6(host) : .ip4(host)
        return SessionDescription(origin: SDPOrigin(username: username, sessionID: sessionID, sessionVersion: version,
                                                    addrType: connection.addrType, address: host),
                                  sessionName: sessionName, connection: connection, media: [media])
    }

    /// The same description with every stream's direction set to `direction` and the origin
    /// version bumped (RFC 3264 §8: a changed offer gets a new version): a hold or resume.
    public func redirected(_ direction: MediaDirection) -> SessionDescription {
        var copy = self
        for i in copy.media.indices { copy.media[i].direction = direction }
        copy.origin = origin.incrementingVersion()
        return copy
    }

    /// The session-level direction attribute, if any. Setting it replaces any existing one;
    /// setting `nil` removes them.
    public var sessionDirection: MediaDirection? {
        get { attributes.direction }
        set { attributes.setDirection(newValue) }
    }

    /// The direction that applies to `media[index]`: its own direction attribute, else the
    /// session-level one, else `sendrecv` (RFC 8866 §6.7). An index out of range yields the
    /// session-level answer.
    public func direction(ofMedia index: Int) -> MediaDirection {
        if media.indices.contains(index), let own = media[index].attributes.direction {
            return own
        }
        return attributes.direction ?? .sendrecv
    }

    /// The connection that applies to `media[index]`: its own `c=`, else the session-level one.
    public func connection(ofMedia index: Int) -> SDPConnection? {
        if media.indices.contains(index), let own = media[index].connection {
            return own
        }
        return connection
    }

    /// Whether `media[index]` is put on hold by whoever sent this description: its direction
    /// is `sendonly` or `inactive` (RFC 3264 §8.4), or its connection address is the null
    /// address of the older RFC 2543 convention.
    public func isHold(ofMedia index: Int) -> Bool {
        direction(ofMedia: index).isHold || (connection(ofMedia: index)?.isNullAddress ?? false)
    }

    /// Whether every stream that is not rejected (port 0) is on hold; false when none is active.
    public var isHold: Bool {
        let active = media.indices.filter { media[$0].port != 0 }
        return !active.isEmpty && active.allSatisfy { isHold(ofMedia: $0) }
    }

    // MARK: Parse

    /// Parses an SDP body given as text. See the byte overload.
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        try parse(Array(text.utf8))
    }

    /// Parses an SDP body.
    ///
    /// Every line is `<type>=<value>` where type is one letter; lines end in CRLF, though bare
    /// LF is accepted too. `v=0` must come first and `o=` is required; a missing `s=` or `t=`
    /// takes its default. Type letters that are not interpreted are kept in ``otherFields``.
    /// A body over ``maximumSize`` bytes, more than ``maximumMediaCount`` media or a port
    /// outside 0-65535 is rejected.
    public static func parse(_ bytes: some Collection<UInt8>) throws(SDPError) -> SessionDescription {
        let count = bytes.count
        guard count <= maximumSize else {
            throw SDPError(line: 0, reason: "body of \(count) bytes exceeds the limit of \(maximumSize) bytes",
                           kind: .tooLarge)
        }
        var reader = SDPReader()
        var lineNumber = 0
        for raw in Array(bytes).split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = raw[...]
            if line.last == 0x0D { line = line.dropLast() }
            while let last = line.last, last == 0x20 || last == 0x09 { line = line.dropLast() }
            if line.isEmpty { continue }  // stray blank lines (often a trailing one) carry nothing
            try reader.read(line: line, number: lineNumber)
        }
        return try reader.finish()
    }

    // MARK: Serialize

    /// The description as an SDP body: fields in RFC 8866 order, each line ending in CRLF.
    public func serialize() -> String {
        var out = ""
        func emit(_ type: Character, _ value: String) {
            out.append(type)
            out += "=" + value + "\r\n"
        }
        emit("v", String(version))
        emit("o", origin.serialize())
        emit("s", sessionName)
        for field in otherFields where field.sessionRank == 0 { emit(field.type, field.value) }
        if let connection { emit("c", connection.serialize()) }
        for bandwidth in bandwidths { emit("b", bandwidth.serialize()) }
        emit("t", timing.serialize())
        for field in otherFields where field.sessionRank == 1 { emit(field.type, field.value) }
        for field in otherFields where field.sessionRank == 2 { emit(field.type, field.value) }
        for attribute in attributes { emit("a", attribute.serialize()) }
        for item in media {
            emit("m", item.mediaLine())
            for field in item.otherFields where field.mediaRank == 0 { emit(field.type, field.value) }
            if let connection = item.connection { emit("c", connection.serialize()) }
            for bandwidth in item.bandwidths { emit("b", bandwidth.serialize()) }
            for field in item.otherFields where field.mediaRank == 1 { emit(field.type, field.value) }
            for attribute in item.attributes { emit("a", attribute.serialize()) }
        }
        return out
    }
}

// MARK: - Field types

/// `o=`: the originator of the session and the identity and version of the description.
///
/// ```
/// origin-field = %s"o" "=" username SP sess-id SP sess-version SP
///                nettype SP addrtype SP unicast-address CRLF
/// ```
public struct SDPOrigin: Sendable, Equatable {
    /// The originator's login, or "-".
    public var username: String
    /// A numeric string that, with the other fields, identifies the session globally. Kept as
    /// text because implementations use values wider than 64 bits.
    public var sessionID: String
    /// Incremented on every new offer that changes the session (RFC 3264 §8).
    public var sessionVersion: UInt64
    /// The network type, "IN".
    public var netType: String
    /// The address type, "IP4" or "IP6".
    public var addrType: String
    /// The originating host's address or name.
    public var address: String

    /// An origin with the given fields; `netType` defaults to "IN" and `addrType` to "IP4".
    public init(username: String = "-", sessionID: String, sessionVersion: UInt64,
                netType: String = "IN", addrType: String = "IP4", address: String) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.netType = netType
        self.addrType = addrType
        self.address = address
    }

    /// The same origin with the session version incremented (wrapping), for a changed offer.
    public func incrementingVersion() -> SDPOrigin {
        var next = self
        next.sessionVersion = sessionVersion &+ 1
        return next
    }

    /// Parses the value of an `o=` line (without "o=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPOrigin {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count == 6 else {
            throw SDPError(line: line, reason: "o= needs 6 fields (username sess-id sess-version nettype addrtype address), found \(parts.count)")
        }
        guard let version = sdpDecimal(parts[2]) else {
            throw SDPError(line: line, reason: "o= session version '\(parts[2])' is not a number")
        }
        return SDPOrigin(username: parts[0], sessionID: parts[1], sessionVersion: version,
                         netType: parts[3], addrType: parts[4], address: parts[5])
    }

    /// The value of the `o=` line (without "o=").
    public func serialize() -> String {
        "\(username) \(sessionID) \(sessionVersion) \(netType) \(addrType) \(address)"
    }
}

/// `c=`: where media is sent or expected.
///
/// ```
/// connection-field = %s"c" "=" nettype SP addrtype SP connection-address CRLF
/// ```
public struct SDPConnection: Sendable, Equatable {
    /// The network type, "IN".
    public var netType: String
    /// The address type, "IP4" or "IP6".
    public var addrType: String
    /// The address, possibly with multicast "/ttl/count" suffixes.
    public var address: String

    /// A connection with the given fields; `netType` defaults to "IN".
    public init(netType: String = "IN", addrType: String, address: String) {
        self.netType = netType
        self.addrType = addrType
        self.address = address
    }

    /// An IPv4 connection ("IN IP4 address").
    public static func ip4(_ address: String) -> SDPConnection {
        SDPConnection(addrType: "IP4", address: address)
    }

    /// An IPv6 connection ("IN IP6 address").
    public static func ip6(_ address: String) -> SDPConnection {
        SDPConnection(addrType: "IP6", address: address)
    }

    /// Whether the address is 0.0.0.0 or ::, which RFC 2543 endpoints send to put a call on
    /// hold (RFC 3264 §8.4 still asks answerers to understand it).
    public var isNullAddress: Bool {
        let host = address.split(separator: "/", maxSplits: 1).first.map(String.init) ?? address
        return host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0"
    }

    /// Parses the value of a `c=` line (without "c=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPConnection {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count == 3 else {
            throw SDPError(line: line, reason: "c= needs 3 fields (nettype addrtype address), found \(parts.count)")
        }
        return SDPConnection(netType: parts[0], addrType: parts[1], address: parts[2])
    }

    /// The value of the `c=` line (without "c=").
    public func serialize() -> String { "\(netType) \(addrType) \(address)" }
}

/// `b=`: a proposed bandwidth, in kilobits per second for "AS" and "CT".
///
/// ```
/// bandwidth-field = %s"b" "=" bwtype ":" bandwidth CRLF
/// ```
public struct SDPBandwidth: Sendable, Equatable {
    /// The modifier: "AS", "CT", "TIAS", "RS", "RR", ...
    public var type: String
    /// The value, in the unit the modifier defines.
    public var bandwidth: UInt64

    /// A bandwidth line with the given modifier and value.
    public init(type: String, bandwidth: UInt64) {
        self.type = type
        self.bandwidth = bandwidth
    }

    /// Parses the value of a `b=` line (without "b=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPBandwidth {
        guard let colon = value.firstIndex(of: ":"), colon != value.startIndex else {
            throw SDPError(line: line, reason: "b= must be <bwtype>:<bandwidth>")
        }
        let amount = String(value[value.index(after: colon)...])
        guard let bandwidth = sdpDecimal(amount) else {
            throw SDPError(line: line, reason: "b= bandwidth '\(amount)' is not a number")
        }
        return SDPBandwidth(type: String(value[..<colon]), bandwidth: bandwidth)
    }

    /// The value of the `b=` line (without "b=").
    public func serialize() -> String { "\(type):\(bandwidth)" }
}

/// `t=`: start and stop times as NTP seconds; 0 0 means a permanent session, as SIP uses.
///
/// ```
/// time-field = %s"t" "=" start-time SP stop-time
/// ```
public struct SDPTiming: Sendable, Equatable {
    /// NTP start time, or 0.
    public var start: UInt64
    /// NTP stop time, or 0 for unbounded.
    public var stop: UInt64

    /// Timing with the given bounds; "0 0" (unbounded) by default.
    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    /// Parses the value of a `t=` line (without "t=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPTiming {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count == 2, let start = sdpDecimal(parts[0]), let stop = sdpDecimal(parts[1]) else {
            throw SDPError(line: line, reason: "t= must be two numbers <start-time> <stop-time>")
        }
        return SDPTiming(start: start, stop: stop)
    }

    /// The value of the `t=` line (without "t=").
    public func serialize() -> String { "\(start) \(stop)" }
}

/// `a=`: a property attribute (`a=sendrecv`, no value) or a value attribute
/// (`a=rtpmap:0 PCMU/8000`).
///
/// ```
/// attribute-field = %s"a" "=" attribute CRLF
/// attribute       = (attribute-name ":" attribute-value) / attribute-name
/// ```
public struct SDPAttribute: Sendable, Equatable {
    /// The name before any ':'.
    public var name: String
    /// The text after the first ':', or nil for a property attribute.
    public var value: String?

    /// An attribute with the given name and optional value.
    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
    }

    /// `a=rtpmap:<map>`.
    public static func rtpmap(_ map: RTPMap) -> SDPAttribute {
        SDPAttribute(name: "rtpmap", value: map.serialize())
    }

    /// `a=fmtp:<payload type> <parameters>`.
    public static func fmtp(payloadType: Int, _ parameters: String) -> SDPAttribute {
        SDPAttribute(name: "fmtp", value: "\(payloadType) \(parameters)")
    }

    /// `a=ptime:<milliseconds>`.
    public static func ptime(_ milliseconds: Int) -> SDPAttribute {
        SDPAttribute(name: "ptime", value: String(milliseconds))
    }

    /// `a=sendrecv` and the like.
    public static func direction(_ direction: MediaDirection) -> SDPAttribute {
        SDPAttribute(name: direction.rawValue)
    }

    /// Parses the value of an `a=` line (without "a=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPAttribute {
        guard let colon = value.firstIndex(of: ":") else {
            guard !value.isEmpty else { throw SDPError(line: line, reason: "a= has no attribute name") }
            return SDPAttribute(name: value)
        }
        guard colon != value.startIndex else {
            throw SDPError(line: line, reason: "a= has no attribute name before ':'")
        }
        return SDPAttribute(name: String(value[..<colon]), value: String(value[value.index(after: colon)...]))
    }

    /// The value of the `a=` line (without "a=").
    public func serialize() -> String {
        if let value { return name + ":" + value }
        return name
    }
}

/// A line kept but not interpreted, such as `i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=` or a type
/// letter this parser does not know.
public struct SDPField: Sendable, Equatable {
    /// The type letter.
    public var type: Character
    /// Everything after '='.
    public var value: String

    /// A field with the given type letter and value.
    public init(type: Character, value: String) {
        self.type = type
        self.value = value
    }

    /// Where the line goes at session level: 0 between s= and c=, 1 after t=, 2 before a=.
    var sessionRank: Int {
        switch type {
        case "i", "u", "e", "p": 0
        case "t", "r", "z": 1
        default: 2
        }
    }

    /// Where the line goes in a media section: 0 between m= and c=, 1 before a=.
    var mediaRank: Int { type == "i" ? 0 : 1 }
}

/// A malformed or over-limit SDP body, with the 1-based line it was found on (0 when it
/// concerns the body as a whole).
public struct SDPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in a way that decides the SIP answer.
    public enum Kind: Sendable, Equatable {
        /// The text does not follow the SDP grammar.
        case malformed
        /// The body is larger than ``SessionDescription/maximumSize``.
        case tooLarge
        /// The body has more than ``SessionDescription/maximumMediaCount`` media.
        case tooManyMedia
    }

    /// The 1-based line number, or 0 for the body as a whole.
    public var line: Int
    /// A readable explanation.
    public var reason: String
    /// The classification.
    public var kind: Kind

    /// An error on `line` (0 for the whole body).
    public init(line: Int, reason: String, kind: Kind = .malformed) {
        self.line = line
        self.reason = reason
        self.kind = kind
    }

    /// The SIP status to answer an offer with: 400 for a malformed body, 413 for an oversize
    /// one, 488 (Not Acceptable Here) for too many media.
    public var statusCode: Int {
        switch kind {
        case .malformed: 400
        case .tooLarge: 413
        case .tooManyMedia: 488
        }
    }

    /// "SDP line 3: ..." or "SDP: ..." for errors about the whole body.
    public var description: String {
        line > 0 ? "SDP line \(line): \(reason)" : "SDP: \(reason)"
    }
}

// MARK: - Attribute lookups

extension Array where Element == SDPAttribute {
    /// The first attribute named `name`.
    public func first(named name: String) -> SDPAttribute? {
        first { $0.name == name }
    }

    /// The values of every attribute named `name`, in order (property attributes give "").
    public func values(named name: String) -> [String] {
        filter { $0.name == name }.map { $0.value ?? "" }
    }

    /// Whether an attribute named `name` is present.
    public func contains(named name: String) -> Bool {
        contains { $0.name == name }
    }

    /// The last direction attribute (the one that wins if a sender repeats itself).
    var direction: MediaDirection? {
        for attribute in reversed() where attribute.value == nil {
            if let direction = MediaDirection(rawValue: attribute.name) { return direction }
        }
        return nil
    }

    /// Replaces the direction attributes with `direction` at the position of the first one
    /// (appending when there was none), or removes them for nil.
    mutating func setDirection(_ direction: MediaDirection?) {
        let isDirection: (SDPAttribute) -> Bool = { $0.value == nil && MediaDirection(rawValue: $0.name) != nil }
        let position = firstIndex(where: isDirection)
        removeAll(where: isDirection)
        guard let direction else { return }
        insert(.direction(direction), at: position ?? endIndex)
    }
}

// MARK: - Parser

/// A decimal number of at most 20 digits with no sign (Swift's integer initialisers accept '+').
func sdpDecimal(_ text: some StringProtocol) -> UInt64? {
    guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
        return nil
    }
    return UInt64(text)
}

/// Reads lines one at a time, checking their order and building the description.
struct SDPReader {
    private var sawVersion = false
    private var origin: SDPOrigin?
    private var sessionName: String?
    private var connection: SDPConnection?
    private var bandwidths: [SDPBandwidth] = []
    private var timing: SDPTiming?
    private var attributes: [SDPAttribute] = []
    private var otherFields: [SDPField] = []
    private var media: [MediaDescription] = []

    /// Reads one line (without its line end), checking `<type>=<value>`.
    mutating func read(line: ArraySlice<UInt8>, number: Int) throws(SDPError) {
        guard line.count >= 2, line[line.startIndex + 1] == UInt8(ascii: "=") else {
            if line.contains(UInt8(ascii: "=")) {
                throw SDPError(line: number, reason: "the type before '=' must be a single letter")
            }
            throw SDPError(line: number, reason: "expected <type>=<value>, found no '='")
        }
        let letter = line[line.startIndex]
        guard (0x61...0x7A).contains(letter) || (0x41...0x5A).contains(letter) else {
            throw SDPError(line: number, reason: "line type must be a letter")
        }
        if line.contains(0x00) || line.contains(0x0D) {
            throw SDPError(line: number, reason: "NUL or CR inside a line")
        }
        let type = Character(Unicode.Scalar(letter))
        let value = String(decoding: line.dropFirst(2), as: UTF8.self)
        try accept(type: type, value: value, number: number)
    }

    private mutating func accept(type: Character, value: String, number: Int) throws(SDPError) {
        guard sawVersion else {
            guard type == "v" else {
                throw SDPError(line: number, reason: "the first line must be v=, found \(type)=")
            }
            guard value == "0" else {
                throw SDPError(line: number, reason: "unsupported SDP version '\(value)', expected 0")
            }
            sawVersion = true
            return
        }
        if media.isEmpty {
            try acceptSession(type: type, value: value, number: number)
        } else {
            try acceptMedia(type: type, value: value, number: number)
        }
    }

    private mutating func acceptSession(type: Character, value: String, number: Int) throws(SDPError) {
        switch type {
        case "v":
            throw SDPError(line: number, reason: "duplicate v= line")
        case "o":
            guard origin == nil else { throw SDPError(line: number, reason: "duplicate o= line") }
            origin = try SDPOrigin.parse(value, line: number)
        case "s":
            guard sessionName == nil else { throw SDPError(line: number, reason: "duplicate s= line") }
            sessionName = value
        case "c":
            guard connection == nil else { throw SDPError(line: number, reason: "duplicate session-level c= line") }
            connection = try SDPConnection.parse(value, line: number)
        case "b":
            bandwidths.append(try SDPBandwidth.parse(value, line: number))
        case "t":
            let parsed = try SDPTiming.parse(value, line: number)
            if timing == nil { timing = parsed } else { otherFields.append(SDPField(type: "t", value: value)) }
        case "a":
            attributes.append(try SDPAttribute.parse(value, line: number))
        case "m":
            try startMedia(value: value, number: number)
        default:
            otherFields.append(SDPField(type: type, value: value))
        }
    }

    private mutating func acceptMedia(type: Character, value: String, number: Int) throws(SDPError) {
        let index = media.count - 1
        switch type {
        case "m":
            try startMedia(value: value, number: number)
        case "c":
            guard media[index].connection == nil else {
                throw SDPError(line: number, reason: "more than one c= line in a media section")
            }
            media[index].connection = try SDPConnection.parse(value, line: number)
        case "b":
            media[index].bandwidths.append(try SDPBandwidth.parse(value, line: number))
        case "a":
            media[index].attributes.append(try SDPAttribute.parse(value, line: number))
        case "v", "o", "s", "u", "e", "p", "t", "r", "z":
            throw SDPError(line: number, reason: "\(type)= is a session-level line and cannot follow an m= line")
        default:
            media[index].otherFields.append(SDPField(type: type, value: value))
        }
    }

    private mutating func startMedia(value: String, number: Int) throws(SDPError) {
        guard media.count < SessionDescription.maximumMediaCount else {
            throw SDPError(line: number, reason: "more than \(SessionDescription.maximumMediaCount) media descriptions",
                           kind: .tooManyMedia)
        }
        media.append(try MediaDescription.parseMediaLine(value, line: number))
    }

    /// Checks the required lines and returns the description.
    func finish() throws(SDPError) -> SessionDescription {
        guard sawVersion else { throw SDPError(line: 0, reason: "empty body: no v= line") }
        guard let origin else { throw SDPError(line: 0, reason: "missing o= line") }
        // Stable by rank so that parse(serialize(x)) gives back the same order.
        let ordered = otherFields.enumerated()
            .sorted { ($0.element.sessionRank, $0.offset) < ($1.element.sessionRank, $1.offset) }
            .map(\.element)
        let media = self.media.map { item in
            var item = item
            item.otherFields = item.otherFields.enumerated()
                .sorted { ($0.element.mediaRank, $0.offset) < ($1.element.mediaRank, $1.offset) }
                .map(\.element)
            return item
        }
        return SessionDescription(origin: origin, sessionName: sessionName ?? "-", connection: connection,
                                  bandwidths: bandwidths, timing: timing ?? SDPTiming(), attributes: attributes,
                                  media: media, otherFields: ordered)
    }
}
