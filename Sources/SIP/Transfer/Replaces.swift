/// The `Replaces` header (RFC 3891 §6.1): the dialog an INVITE takes the place of.
///
/// ```
/// Replaces        = "Replaces" HCOLON callid *(SEMI replaces-param)
/// replaces-param  = to-tag / from-tag / early-flag / generic-param
/// to-tag          = "to-tag" EQUAL token
/// from-tag        = "from-tag" EQUAL token
/// early-flag      = "early-only"
/// ```
/// The tags are the dialog's as the sender of the INVITE sees it, reversed at the receiver:
/// `to-tag` is the receiver's local tag, `from-tag` its remote tag (§3).
public struct Replaces: Sendable, Equatable, CustomStringConvertible {
    public var callID: String
    public var toTag: String
    public var fromTag: String
    /// Only an early dialog may be replaced (§6.1).
    public var earlyOnly: Bool

    public init(callID: String, toTag: String, fromTag: String, earlyOnly: Bool = false) {
        self.callID = callID
        self.toTag = toTag
        self.fromTag = fromTag
        self.earlyOnly = earlyOnly
    }

    /// The value that names our `dialog` to its remote party, who receives the INVITE (an
    /// attended transfer's Refer-To): seen from there, its tag (our remote tag) is the to-tag.
    public init(naming dialog: Dialog) {
        self.init(callID: dialog.callID, toTag: dialog.remoteTag ?? "", fromTag: dialog.localTag)
    }

    public static func parse(_ text: String) throws(SIPParseError) -> Replaces {
        var s = SIPScanner(text)
        s.skipWhitespace()
        let callID = s.upTo([0x3B]).trimmingSIPWhitespace()
        guard !callID.isEmpty, !callID.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }) else {
            throw .init(400, "Replaces without a Call-ID")
        }
        let params = try s.parameters()
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text in Replaces") }
        guard let to = params[parameter: "to-tag"] ?? nil, !to.isEmpty,
            let from = params[parameter: "from-tag"] ?? nil, !from.isEmpty
        else { throw .init(400, "Replaces needs to-tag and from-tag") }
        return Replaces(callID: callID, toTag: to, fromTag: from, earlyOnly: params[parameter: "early-only"] != nil)
    }

    public func serialize() -> String {
        callID + ";to-tag=" + toTag + ";from-tag=" + fromTag + (earlyOnly ? ";early-only" : "")
    }

    public var description: String { serialize() }

    /// As a URI header of a Refer-To (`?Replaces=...`, RFC 3891 §5): escaped so that its
    /// `;`, `=`, `@` and other reserved characters stay inside the header's value.
    public var uriHeader: String { "Replaces=" + URIEscaping.escape(serialize()) }

    /// The Replaces a Refer-To URI carries in its headers (`?Replaces=...&...`), if any.
    public static func fromURIHeaders(_ headers: String?) throws(SIPParseError) -> Replaces? {
        guard let headers else { return nil }
        for field in headers.split(separator: "&") {
            let parts = field.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "replaces" else { continue }
            guard let value = URIEscaping.unescape(String(parts[1])) else {
                throw .init(400, "bad escape in the Replaces of a URI")
            }
            return try parse(value)
        }
        return nil
    }
}

/// RFC 3986 percent-encoding for the values of SIP URI headers (RFC 3261 §25.1 `hvalue`).
public enum URIEscaping {
    /// `hnv-unreserved / unreserved` stay as they are; everything else is `%XX`.
    public static func escape(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            if isAlnum(b) || "-_.!~*'()[]/?:+$".utf8.contains(b) {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// nil when a `%` is not followed by two hex digits.
    public static func unescape(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25 {
                guard i + 2 < bytes.count, isHex(bytes[i + 1]), isHex(bytes[i + 2]),
                    let v = UInt8(String(decoding: bytes[i + 1...i + 2], as: UTF8.self), radix: 16)
                else { return nil }
                out.append(v)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
