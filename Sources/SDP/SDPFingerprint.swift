/// `a=fingerprint:<hash-func> <fingerprint>` (RFC 8122 §5).
///
/// ```
/// fingerprint-attribute = "fingerprint" ":" hash-func SP fingerprint
/// hash-func             = "sha-1" / "sha-224" / "sha-256" / "sha-384" / "sha-512" / ...
/// fingerprint           = 2UHEX *(":" 2UHEX)
/// ```
public struct SDPFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// Lower case, as RFC 8122 registers them (`sha-256`).
    public var hashFunction: String
    /// The certificate's digest.
    public var bytes: [UInt8]

    /// A fingerprint of `bytes` made with `hashFunction` (stored in lower case).
    public init(hashFunction: String, bytes: [UInt8]) {
        self.hashFunction = hashFunction.lowercased()
        self.bytes = bytes
    }

    /// Reads the attribute value; nil when it is not a hash name and colon-separated hex pairs.
    public init?(_ value: String) {
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        var bytes: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let b = UInt8(pair, radix: 16) else { return nil }
            bytes.append(b)
        }
        guard !bytes.isEmpty else { return nil }
        self.init(hashFunction: String(parts[0]), bytes: bytes)
    }

    /// `sha-256 AB:CD:...` (upper-case hex, as RFC 8122's grammar writes it).
    public var value: String {
        hashFunction + " "
            + bytes.map { b in
                let hex = String(b, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined(separator: ":")
    }

    /// The attribute value, as ``value``.
    public var description: String { value }
}
