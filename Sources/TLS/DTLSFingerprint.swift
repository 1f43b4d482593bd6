import Crypto

/// A certificate fingerprint as SDP carries it (`a=fingerprint`, RFC 8122 §5): a hash
/// function's name and the digest of the DER certificate, written `sha-256 AB:CD:...`
/// (upper-case hex pairs joined by colons). DTLS-SRTP (RFC 5763 §5) checks the peer's
/// self-signed certificate against the fingerprint in its SDP instead of against a CA.
public struct DTLSFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The hash functions RFC 8122 §5 names that we compute (md2 and md5 are refused).
    public enum Algorithm: String, Sendable, CaseIterable, Comparable {
        case sha1 = "sha-1"
        case sha224 = "sha-224"
        case sha256 = "sha-256"
        case sha384 = "sha-384"
        case sha512 = "sha-512"

        /// The digest's length in bytes.
        public var digestLength: Int {
            switch self {
            case .sha1: 20
            case .sha224: 28
            case .sha256: 32
            case .sha384: 48
            case .sha512: 64
            }
        }

        /// Weaker before stronger (by digest length), so `max()` picks the strongest.
        public static func < (a: Algorithm, b: Algorithm) -> Bool { a.digestLength < b.digestLength }
    }

    public let algorithm: Algorithm
    /// The digest (`algorithm.digestLength` bytes).
    public let digest: [UInt8]

    /// nil when `digest` has the wrong length for `algorithm`.
    public init?(algorithm: Algorithm, digest: [UInt8]) {
        guard digest.count == algorithm.digestLength else { return nil }
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Parses an `a=fingerprint` value: `sha-256 AB:CD:...` (the hash name in any case, hex
    /// in either case, RFC 8122 §5). nil for an unknown hash, bad hex or a wrong length.
    public init?(sdp value: some StringProtocol) {
        let parts = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, let algorithm = Algorithm(rawValue: parts[0].lowercased()) else { return nil }
        var digest: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard let byte = Crypto.byte(hexPair: pair) else { return nil }
            digest.append(byte)
        }
        self.init(algorithm: algorithm, digest: digest)
    }

    /// The digest as RFC 8122 writes it: `AB:CD:...` (what `openssl x509 -fingerprint` prints
    /// after `=`).
    public var hex: String { Crypto.hex(digest, uppercase: true, separator: UInt8(ascii: ":")) }

    /// The `a=fingerprint` value: `sha-256 AB:CD:...`.
    public var sdpValue: String { "\(algorithm.rawValue) \(hex)" }

    public var description: String { sdpValue }

    /// RFC 8122 §5: of the peer's fingerprints, those of the strongest hash it offered; the
    /// certificate must match one of them.
    static func strongest(_ fingerprints: [DTLSFingerprint]) -> [DTLSFingerprint] {
        guard let best = fingerprints.map(\.algorithm).max() else { return [] }
        return fingerprints.filter { $0.algorithm == best }
    }
}
