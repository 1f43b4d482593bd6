/// Checks for header fields built from outside input (an app's headers, a profile's fixed
/// headers, a caller name), so that nothing we write can end a header early and start
/// another: the header injection an unchecked CR or LF allows.
public enum HeaderFieldSyntax {
    /// RFC 3261 §25.1 `token`: what a `header-name` is.
    public static func isToken(_ text: String) -> Bool { SIPScanner.isToken(text) }

    /// The first byte of `value` that a field value we write may not hold: every control
    /// byte (%x00-1F, DEL), HTAB included. The grammar allows HTAB as LWS, but a value an app
    /// sends has no reason to carry one, and CR, LF and NUL are the injection itself.
    public static func forbiddenByte(inValue value: String) -> UInt8? {
        value.utf8.first { $0 < 0x20 || $0 == 0x7F }
    }
}
