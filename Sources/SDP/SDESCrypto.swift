import Crypto

/// One `a=crypto` attribute of SDP Security Descriptions (RFC 4568): a crypto suite and the
/// master key and salt the sender of the SDP will protect its SRTP with.
///
/// ```
/// a=crypto:<tag> <crypto-suite> <key-params> [<session-params>]
/// tag            = 1*9DIGIT
/// crypto-suite   = 1*(ALPHA / DIGIT / "_")
/// key-params     = key-param *(";" key-param)
/// key-param      = key-method ":" key-info          ; only "inline" is defined
/// key-info       = key-salt ["|" lifetime] ["|" mki]
/// key-salt       = 1*(base64)                        ; master key || master salt
/// lifetime       = ["2^"] 1*(DIGIT)
/// mki            = mki-value ":" mki-length          ; mki-length 1..128
/// session-param  = 1*(VCHAR)                         ; e.g. UNENCRYPTED_SRTCP, KDR=n
/// ```
///
/// The key is carried decoded (`keySalt`); nothing here logs or describes it.
public struct SDESCrypto: Sendable, Equatable {
    /// One `inline:` key parameter.
    public struct KeyParameter: Sendable, Equatable {
        /// The master key followed by the master salt, decoded from base64.
        public var keySalt: [UInt8]
        /// The key's lifetime in packets (`2^31` is 2147483648), when given.
        public var lifetime: UInt64?
        /// The master key identifier and its length in bytes, when given.
        public var mki: (value: UInt64, length: Int)?

        public init(keySalt: [UInt8], lifetime: UInt64? = nil, mki: (value: UInt64, length: Int)? = nil) {
            self.keySalt = keySalt
            self.lifetime = lifetime
            self.mki = mki
        }

        public static func == (a: KeyParameter, b: KeyParameter) -> Bool {
            a.keySalt == b.keySalt && a.lifetime == b.lifetime && a.mki?.value == b.mki?.value
                && a.mki?.length == b.mki?.length
        }
    }

    /// Why an `a=crypto` value could not be read (the message names the part, never the key).
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Matches an answer's line to the offer's (1...999999999).
    public var tag: UInt32
    /// As written: `AES_CM_128_HMAC_SHA1_80`, `AEAD_AES_128_GCM`, ...
    public var suite: String
    /// The key parameters, in order (almost always one).
    public var keys: [KeyParameter]
    /// Session parameters as written (`UNENCRYPTED_SRTP`, `KDR=23`, `WSH=128`, ...).
    public var sessionParameters: [String]

    /// A line with the given fields.
    public init(tag: UInt32, suite: String, keys: [KeyParameter], sessionParameters: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.keys = keys
        self.sessionParameters = sessionParameters
    }

    /// A line with one inline key and nothing else: what the gateway offers and answers.
    public init(tag: UInt32, suite: String, keySalt: [UInt8]) {
        self.init(tag: tag, suite: suite, keys: [KeyParameter(keySalt: keySalt)])
    }

    /// Reads the value of an `a=crypto` attribute (the text after `crypto:`).
    public static func parse(_ value: String) throws(ParseError) -> SDESCrypto {
        let fields = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count >= 3 else { throw ParseError("a=crypto needs a tag, a crypto suite and key parameters") }
        guard fields[0].count <= 9, fields[0].allSatisfy(\.isASCIIDigit), let tag = UInt32(fields[0]), tag > 0 else {
            throw ParseError("a=crypto tag \"\(fields[0])\" is not 1 to 9 digits")
        }
        let suite = fields[1]
        guard suite.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw ParseError("a=crypto suite \"\(suite)\" has characters outside ALPHA, DIGIT and \"_\"")
        }
        var keys: [KeyParameter] = []
        for parameter in fields[2].split(separator: ";", omittingEmptySubsequences: false) {
            keys.append(try keyParameter(Substring(parameter)))
        }
        return SDESCrypto(tag: tag, suite: suite, keys: keys, sessionParameters: Array(fields[3...]))
    }

    private static func keyParameter(_ text: Substring) throws(ParseError) -> KeyParameter {
        guard let colon = text.firstIndex(of: ":"), text[..<colon].lowercased() == "inline" else {
            throw ParseError("a=crypto key method is not \"inline\"")
        }
        let parts = text[text.index(after: colon)...].split(separator: "|", omittingEmptySubsequences: false)
        guard let keySalt = Base64.decode(parts[0]), !keySalt.isEmpty else {
            throw ParseError("a=crypto inline key is not base64")
        }
        var key = KeyParameter(keySalt: keySalt)
        for part in parts.dropFirst() {
            if let colon = part.firstIndex(of: ":") {
                guard key.mki == nil, let value = UInt64(part[..<colon]),
                    let length = Int(part[part.index(after: colon)...]),
                    (1...128).contains(length)
                else { throw ParseError("a=crypto MKI \"\(part)\" is not value:length (1-128)") }
                key.mki = (value, length)
            } else {
                guard key.lifetime == nil, key.mki == nil, let lifetime = Self.lifetime(part) else {
                    throw ParseError("a=crypto lifetime \"\(part)\" is not a number or 2^n")
                }
                key.lifetime = lifetime
            }
        }
        return key
    }

    private static func lifetime(_ text: Substring) -> UInt64? {
        if text.hasPrefix("2^") {
            guard let exponent = UInt64(text.dropFirst(2)), exponent < 64 else { return nil }
            return 1 << exponent
        }
        return UInt64(text)
    }

    /// The attribute value as written into SDP.
    public var value: String {
        var text = "\(tag) \(suite) "
        text += keys.map { key in
            var info = "inline:" + Base64.encode(key.keySalt)
            if let lifetime = key.lifetime {
                info += "|" + (lifetime.nonzeroBitCount == 1 ? "2^\(lifetime.trailingZeroBitCount)" : String(lifetime))
            }
            if let mki = key.mki { info += "|\(mki.value):\(mki.length)" }
            return info
        }.joined(separator: ";")
        for parameter in sessionParameters { text += " " + parameter }
        return text
    }

    /// The `a=crypto:...` attribute.
    public var attribute: SDPAttribute { SDPAttribute(name: "crypto", value: value) }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
