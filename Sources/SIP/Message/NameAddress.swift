/// The value of From, To, Contact, Route and Record-Route (RFC 3261 §20, §25.1):
///
/// ```
/// from-spec    = ( name-addr / addr-spec ) *( SEMI from-param )
/// name-addr    = [ display-name ] LAQUOT addr-spec RAQUOT
/// display-name = *(token LWS) / quoted-string
/// ```
/// In the `addr-spec` form (no angle brackets) a `;` ends the URI and starts header
/// parameters, and `?` or `,` may not appear (RFC 3261 §20.10; RFC 4475 §3.1.2.13).
public struct NameAddress: Sendable, Equatable, CustomStringConvertible {
    public var displayName: String?
    public var uri: SIPURI
    public var parameters: [SIPParameter]
    /// Whether the value was written with `<>`; kept so serialisation round-trips.
    public var bracketed: Bool

    public init(displayName: String? = nil, uri: SIPURI, parameters: [SIPParameter] = []) {
        self.displayName = displayName
        self.uri = uri
        self.parameters = parameters
        self.bracketed = true
    }

    /// The `tag` parameter (RFC 3261 §19.3).
    public var tag: String? {
        get { parameters[parameter: "tag"] ?? nil }
        set { parameters.set("tag", newValue) }
    }

    public static func parse(_ text: String) throws(SIPParseError) -> NameAddress {
        var s = SIPScanner(text)
        s.skipWhitespace()
        var display: String? = nil
        var uriRange: Range<Int>
        var bracketed = true
        if s.peek == 0x22 {
            display = try s.quotedString()
            s.skipWhitespace()
            guard s.peek == 0x3C else { throw .init(400, "expected < after display name") }
        }
        if s.peek != 0x3C {
            // Either `*(token LWS) <uri>` or a bare addr-spec.
            let save = s.index
            var words: [String] = []
            while let word = s.token() {
                words.append(word)
                s.skipWhitespace()
            }
            if s.peek == 0x3C, !words.isEmpty {
                display = words.joined(separator: " ")
            } else {
                s.index = save
                bracketed = false
            }
        }
        if bracketed {
            guard s.peek == 0x3C else { throw .init(400, "malformed display name") }
            s.index += 1
            let start = s.index
            while let b = s.peek, b != 0x3E { s.index += 1 }
            guard s.peek == 0x3E else { throw .init(400, "missing >") }
            uriRange = start..<s.index
            s.index += 1
        } else {
            let start = s.index
            while let b = s.peek, b != 0x3B, b != 0x20, b != 0x09 {
                if b == 0x3F || b == 0x2C { throw .init(400, "addr-spec with ? or , must be enclosed in <>") }
                s.index += 1
            }
            uriRange = start..<s.index
        }
        let uri = try SIPURI.parse(s.bytes[uriRange])
        let params = try s.parameters()
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text after address: \(s.rest)") }
        var value = NameAddress(displayName: display, uri: uri, parameters: params)
        value.bracketed = bracketed
        return value
    }

    public func serialize() -> String {
        var out = ""
        if let displayName {
            out +=
                SIPScanner.isToken(displayName)
                ? displayName + " " : "\"" + SIPScanner.escapeQuoted(displayName) + "\" "
        }
        // A URI with parameters or headers must be bracketed or they would read as ours.
        if bracketed || displayName != nil || !uri.parameters.isEmpty || uri.headers != nil {
            out += "<" + uri.serialize() + ">"
        } else {
            out += uri.serialize()
        }
        return out + parameters.serialized()
    }

    public var description: String { serialize() }
}
