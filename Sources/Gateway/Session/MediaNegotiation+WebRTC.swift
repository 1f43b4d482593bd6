import ICE
import Media
import SDP
import SIP
import TLS

/// The gateway's DTLS identity for WebRTC legs: one certificate and context per process,
/// made the first time a browser calls (its SHA-256 fingerprint goes into every answer).
let webRTCIdentity: Result<DTLSContext, DTLSFailure> = {
    do throws(DTLSFailure) {
        let certificate = try DTLSCertificate()
        return .success(try DTLSContext(certificate: certificate))
    } catch {
        return .failure(error)
    }
}()

extension MediaNegotiation {
    /// A browser's (or SFU's) offer: `UDP/TLS/RTP/SAVPF` with ICE credentials and a
    /// fingerprint. Opus is required (every WebRTC endpoint has it) and always chosen, encoded
    /// with the session's `opus` settings (gateway, profile, request) like any platform leg
    /// (an Opus trunk makes the call passthrough); rtcp-mux too (we carry RTCP on the
    /// one socket, RFC 8834 §5.1.3).
    static func webrtcLeg(
        _ sdp: SessionDescription, index: Int, opus: AudioCodec.OpusSettings
    ) throws(NegotiationError) -> NegotiatedLeg {
        let m = sdp.media[index]
        let remote: WebRTCMediaParameters
        do { remote = try WebRTCMediaParameters(sdp, media: index) } catch {
            throw NegotiationError("media.sdp: a WebRTC offer needs \(error)")
        }
        guard remote.rtcpMux else { throw NegotiationError("media.sdp: a WebRTC offer must have a=rtcp-mux") }
        guard let opusMap = m.rtpMaps.first(where: { $0.encodingName.lowercased() == "opus" && $0.clockRate == 48_000 })
        else {
            throw NegotiationError("media.sdp: the WebRTC offer has no opus/48000/2")
        }
        guard case .success(let context) = webRTCIdentity,
            let ours = SDPFingerprint(context.certificate.fingerprint.sdpValue)
        else {
            throw NegotiationError("WebRTC is unavailable: no DTLS certificate could be made")
        }
        let credentials = ICECredentials.random()
        let te = m.telephoneEvent(clockRate: opusMap.clockRate)
        let address = sdp.connection(ofMedia: index).flatMap { $0.isNullAddress ? nil : $0.address }
        var leg = NegotiatedLeg(
            codec: .opus(opus), rtpMap: opusMap, telephoneEvent: te,
            remote: address.map { SocketAddress(host: $0, port: Int(m.port)) },
            direction: sdp.direction(ofMedia: index).answer)
        leg.proto = m.proto
        leg.webrtc = WebRTCLegParameters(
            offer: sdp, index: index, remote: remote, localUfrag: credentials.ufrag,
            localPwd: credentials.pwd, fingerprint: ours)
        return leg
    }
}

extension WebRTCLegParameters {
    /// The media engine's side: credentials, our context, the role, the peer's fingerprints.
    var media: WebRTCMediaConfiguration? {
        guard case .success(let context) = webRTCIdentity else { return nil }
        return WebRTCMediaConfiguration(
            local: ICECredentials(ufrag: localUfrag, pwd: localPwd),
            remote: ICECredentials(ufrag: remote.iceUfrag, pwd: remote.icePwd),
            context: context, role: weAreDTLSServer ? .server : .client,
            peerFingerprints: remote.fingerprints.compactMap { DTLSFingerprint(sdp: $0.value) })
    }
}
