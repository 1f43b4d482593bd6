/// A decimal number of at most 20 digits with no sign (Swift's integer initialisers accept '+').
func sdpDecimal(_ text: some StringProtocol) -> UInt64? {
    guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
        return nil
    }
    return UInt64(text)
}

/// A port number 0-65535 in decimal.
func sdpPort(_ text: some StringProtocol) -> UInt16? {
    guard let number = sdpDecimal(text), number <= 65_535 else { return nil }
    return UInt16(number)
}

// The grammar this reader follows (RFC 8866 §9; the field values are parsed by their types):
//
//   session-description = version-field
//                         origin-field
//                         session-name-field
//                         [information-field]
//                         [uri-field]
//                         *email-field
//                         *phone-field
//                         [connection-field]
//                         *bandwidth-field
//                         1*time-description
//                         [key-field]
//                         *attribute-field
//                         *media-description
//   version-field       = %s"v" "=" 1*DIGIT CRLF         ; only 0
//   origin-field        = %s"o" "=" username SP sess-id SP sess-version SP
//                         nettype SP addrtype SP unicast-address CRLF
//   session-name-field  = %s"s" "=" text CRLF
//   information-field   = %s"i" "=" text CRLF
//   uri-field           = %s"u" "=" uri CRLF
//   email-field         = %s"e" "=" email-address CRLF
//   phone-field         = %s"p" "=" phone-number CRLF
//   connection-field    = %s"c" "=" nettype SP addrtype SP connection-address CRLF
//   bandwidth-field     = %s"b" "=" bwtype ":" bandwidth CRLF
//   time-description    = time-field [repeat-description] [zone-adjustments]
//   time-field          = %s"t" "=" start-time SP stop-time CRLF
//   repeat-description  = 1*(CRLF repeat-field)            ; r=
//   zone-adjustments    = %s"z" "=" time SP ["-"] typed-time *(...) CRLF
//   key-field           = %s"k" "=" key-type CRLF
//   attribute-field     = %s"a" "=" attribute CRLF
//   attribute           = (attribute-name ":" attribute-value) / attribute-name
//   media-description   = media-field
//                         [information-field]
//                         *connection-field
//                         *bandwidth-field
//                         [key-field]
//                         *attribute-field
//   media-field         = %s"m" "=" media SP port ["/" integer] SP proto 1*(SP fmt) CRLF
//
// As the field letters fix the section, the reader is a two-state machine (session level
// until the first m=, then media level) that checks each letter is allowed where it is:
// v= first and once, o= required and once, s= and t= defaulted when absent, at most one c=
// per level, no session-only letter (v o s u e p t r z) after an m=. Deviations the field
// sees every day are tolerated: bare LF line ends, trailing blanks, blank lines, and the
// relative order of session-level lines before the first m=. i=, u=, e=, p=, r=, z=, k=,
// extra t= and unknown letters are kept as ``SDPField``s for the round trip.

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
            throw SDPError(
                line: number, reason: "more than \(SessionDescription.maximumMediaCount) media descriptions",
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
        return SessionDescription(
            origin: origin, sessionName: sessionName ?? "-", connection: connection,
            bandwidths: bandwidths, timing: timing ?? SDPTiming(), attributes: attributes,
            media: media, otherFields: ordered)
    }
}
