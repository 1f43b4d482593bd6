// What a WebRTC peer's SDP says beyond codecs: ICE credentials (RFC 8839), the DTLS
// certificate fingerprint and role (RFC 8122, RFC 5763), BUNDLE and rtcp-mux (RFC 8843,
// RFC 5761). Values only; the gateway decides what to answer.

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
    public var bytes: [UInt8]

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
        hashFunction + " " + bytes.map { b in
            let hex = String(b, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    public var description: String { value }
}

/// `a=setup` (RFC 4145 §4, RFC 5763 §5): who opens the DTLS association.
public enum SDPSetupRole: String, Sendable, Equatable, CaseIterable {
    /// The endpoint starts the handshake (the DTLS client).
    case active
    /// The endpoint waits for the handshake (the DTLS server).
    case passive
    /// Either: the offerer lets the answerer choose (RFC 5763 says the offer must be this).
    case actpass
    case holdconn
}

/// The WebRTC parameters of one media description, with the session-level ones it
/// inherits (RFC 8839 §5.4: ICE credentials may sit at either level; a fingerprint too).
public struct WebRTCMediaParameters: Sendable, Equatable {
    public var iceUfrag: String
    public var icePwd: String
    /// Every `a=fingerprint` (a peer may give several hash functions).
    public var fingerprints: [SDPFingerprint]
    public var setup: SDPSetupRole
    /// `a=mid`, for the answer to echo (and BUNDLE to group).
    public var mid: String?
    public var rtcpMux: Bool
    /// The peer is ICE-lite itself.
    public var iceLite: Bool

    /// Why a stream is not a WebRTC stream we can answer.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Reads the media description `index` of `sdp`. Throws when an ICE credential, the
    /// fingerprint or a usable setup role is missing, as RFC 8839 and RFC 5763 require them.
    public init(_ sdp: SessionDescription, media index: Int) throws(Problem) {
        let m = sdp.media[index]
        func first(_ name: String) -> String? { m.attributes.first(named: name)?.value ?? sdp.attributes.first(named: name)?.value }
        guard let ufrag = first("ice-ufrag"), (4...256).contains(ufrag.count) else {
            throw Problem("no a=ice-ufrag (4 to 256 characters, RFC 8839 §5.4)")
        }
        guard let pwd = first("ice-pwd"), (22...256).contains(pwd.count) else {
            throw Problem("no a=ice-pwd (22 to 256 characters, RFC 8839 §5.4)")
        }
        let own = m.attributes.values(named: "fingerprint")
        let prints = (own.isEmpty ? sdp.attributes.values(named: "fingerprint") : own).compactMap(SDPFingerprint.init)
        guard !prints.isEmpty else { throw Problem("no a=fingerprint (RFC 5763 §5)") }
        let setup = first("setup").flatMap { SDPSetupRole(rawValue: $0.lowercased()) } ?? .active
        guard setup != .holdconn else { throw Problem("a=setup:holdconn: the peer will not open a DTLS association") }
        iceUfrag = ufrag
        icePwd = pwd
        fingerprints = prints
        self.setup = setup
        mid = m.attributes.first(named: "mid")?.value
        rtcpMux = m.attributes.contains(named: "rtcp-mux")
        iceLite = sdp.attributes.contains(named: "ice-lite")
    }
}

extension MediaDescription {
    /// DTLS-SRTP with ICE, as browsers offer it: `UDP/TLS/RTP/SAVPF` (RFC 5764 §8), or
    /// `UDP/TLS/RTP/SAVP`.
    public var isDTLSSRTP: Bool { proto.uppercased().hasPrefix("UDP/TLS/RTP/SAVP") }
}
