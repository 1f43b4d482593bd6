import ICE
import IOCore
import SDP
import SIP

/// The platform leg's WebRTC side of an offer/answer: what the app's offer asked for, and
/// what we answer with (ICE-lite, our DTLS certificate's fingerprint, one host candidate).
public struct WebRTCLegParameters: Sendable, Equatable {
    /// The app's offer and its audio stream's index (the answer mirrors its streams).
    public var offer: SessionDescription
    public var index: Int
    /// The app's ICE credentials, fingerprints, role, mid.
    public var remote: WebRTCMediaParameters
    /// Ours, random per session (RFC 8839 §5.4).
    public var localUfrag: String
    public var localPwd: String
    /// Our certificate's fingerprint.
    public var fingerprint: SDPFingerprint

    public init(
        offer: SessionDescription, index: Int, remote: WebRTCMediaParameters, localUfrag: String, localPwd: String,
        fingerprint: SDPFingerprint
    ) {
        self.offer = offer
        self.index = index
        self.remote = remote
        self.localUfrag = localUfrag
        self.localPwd = localPwd
        self.fingerprint = fingerprint
    }

    /// Our DTLS role: the app's offer says `actpass` (RFC 5763 §5: the answerer picks; we
    /// pick passive, as ICE-lite servers do) or `active`; a `passive` app makes us active.
    public var weAreDTLSServer: Bool { remote.setup != .passive }
}

/// Builds the SDP answer to a WebRTC offer (RFC 8829 §5.3 in outline): the offer's streams in
/// order, the first audio one answered, the rest rejected with port 0, BUNDLE kept to the
/// answered stream.
enum WebRTCAnswer {
    /// `offer`: the app's SDP; `index`: its audio stream we answer; `leg`: the codec chosen
    /// (Opus) and telephone-event; `address`: our media address (the advertised one).
    static func make(
        offer: SessionDescription, index: Int, leg: NegotiatedLeg, webrtc: WebRTCLegParameters,
        address: SocketAddress, session: SDPSessionIdentity, direction: MediaDirection
    ) -> SessionDescription {
        var m = MediaDescription.audio(
            port: UInt16(address.port), codecs: [leg.rtpMap], telephoneEvent: leg.telephoneEvent,
            direction: direction)
        m.proto = offer.media[index].proto
        if leg.rtpMap.encodingName.lowercased() == "opus" {
            m.attributes.insert(.fmtp(payloadType: leg.rtpMap.payloadType, "minptime=10;useinbandfec=1"), at: 1)
        }
        var extra: [SDPAttribute] = []
        if let mid = webrtc.remote.mid { extra.append(.mid(mid)) }
        extra += [
            .iceUfrag(webrtc.localUfrag),
            .icePwd(webrtc.localPwd),
            .fingerprint(webrtc.fingerprint),
            .setup(webrtc.weAreDTLSServer ? .passive : .active),
            .rtcpMux,
            .candidate(ICECandidate(address: address).sdpCandidate),
            .endOfCandidates
        ]
        m.attributes = extra + m.attributes
        var answer = SessionDescription.single(
            m, host: address.host, sessionID: session.id, version: session.version,
            username: "irisgw", sessionName: "irisgw")
        // Every offered stream gets a line, in order (RFC 3264 §6); the others are refused.
        answer.media = offer.media.indices.map { i in
            guard i != index else { return m }
            let other = offer.media[i]
            var refused = MediaDescription(
                media: other.media, port: 0, proto: other.proto, formats: Array(other.formats.prefix(1)))
            if let mid = other.attributes.first(named: "mid")?.value { refused.attributes = [.mid(mid)] }
            return refused
        }
        answer.attributes.insert(.iceLite, at: 0)
        if let mid = webrtc.remote.mid,
            offer.attributes.values(named: "group").contains(where: {
                $0.split(separator: " ").first == "BUNDLE" && $0.split(separator: " ").contains(Substring(mid))
            })
        {
            answer.attributes.insert(SDPAttribute(name: "group", value: "BUNDLE " + mid), at: 0)
        }
        return answer
    }
}
