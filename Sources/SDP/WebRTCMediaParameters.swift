// What a WebRTC peer's SDP says beyond codecs: ICE credentials (RFC 8839), the DTLS
// certificate fingerprint and role (RFC 8122, RFC 5763), BUNDLE and rtcp-mux (RFC 8843,
// RFC 5761). Values only; the gateway decides what to answer.

/// The WebRTC parameters of one media description, with the session-level ones it
/// inherits (RFC 8839 §5.4: ICE credentials may sit at either level; a fingerprint too).
public struct WebRTCMediaParameters: Sendable, Equatable {
    /// `a=ice-ufrag` (4 to 256 characters).
    public var iceUfrag: String
    /// `a=ice-pwd` (22 to 256 characters).
    public var icePwd: String
    /// Every `a=fingerprint` (a peer may give several hash functions).
    public var fingerprints: [SDPFingerprint]
    /// `a=setup`; `active` when absent (RFC 5763 §5: an answer without it is active).
    public var setup: SDPSetupRole
    /// `a=mid`, for the answer to echo (and BUNDLE to group).
    public var mid: String?
    /// `a=rtcp-mux` (RFC 5761): RTCP on the RTP port.
    public var rtcpMux: Bool
    /// The peer is ICE-lite itself.
    public var iceLite: Bool

    /// Why a stream is not a WebRTC stream we can answer.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is missing or wrong, naming the RFC.
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Reads the media description `index` of `sdp`. Throws when an ICE credential, the
    /// fingerprint or a usable setup role is missing, as RFC 8839 and RFC 5763 require them.
    public init(_ sdp: SessionDescription, media index: Int) throws(Problem) {
        let m = sdp.media[index]
        func first(_ name: String) -> String? {
            m.attributes.first(named: name)?.value ?? sdp.attributes.first(named: name)?.value
        }
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
