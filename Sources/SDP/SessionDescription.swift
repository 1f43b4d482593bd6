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
    public static func single(
        _ media: MediaDescription, host: String, sessionID: String, version: UInt64,
        username: String = "-", sessionName: String = "-"
    ) -> SessionDescription {
        let connection: SDPConnection = host.contains(":") ? .ip6(host) : .ip4(host)
        return SessionDescription(
            origin: SDPOrigin(
                username: username, sessionID: sessionID, sessionVersion: version,
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

    /// The index of the first media description of type `media` ("audio", "video", ...).
    public func firstMedia(_ media: String) -> Int? {
        self.media.firstIndex { $0.media == media }
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
            throw SDPError(
                line: 0, reason: "body of \(count) bytes exceeds the limit of \(maximumSize) bytes",
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
