import ICE
import IOCore
import TLS

/// What a WebRTC platform leg needs from the offer/answer: ICE credentials both ways, the
/// DTLS context (our certificate), our DTLS role and the peer's fingerprints.
public struct WebRTCMediaConfiguration: Sendable {
    public var local: ICECredentials
    public var remote: ICECredentials
    public var context: DTLSContext
    public var role: DTLSRole
    public var peerFingerprints: [DTLSFingerprint]
    /// Seconds for ICE and DTLS to finish before the leg gives up. Default 20.
    public var setupTimeout: Double

    public init(
        local: ICECredentials, remote: ICECredentials, context: DTLSContext, role: DTLSRole,
        peerFingerprints: [DTLSFingerprint], setupTimeout: Double = 20
    ) {
        self.local = local
        self.remote = remote
        self.context = context
        self.role = role
        self.peerFingerprints = peerFingerprints
        self.setupTimeout = setupTimeout
    }
}

/// ICE-lite and DTLS-SRTP on one leg's socket (RFC 7983 demultiplexing, rtcp-mux): STUN
/// checks are answered and nominate where media goes, the DTLS handshake keys SRTP, and
/// nothing is sent before both are done. Loop-confined, like its leg.
final class WebRTCPath {  // confined to its media thread with its leg
    var agent: ICELiteAgent
    var dtls: DTLSTransport
    let startedAt: Double
    let setupTimeout: Double
    /// Set once: why the path failed (the leg stops; the session ends).
    private(set) var failure: String?
    private var reportedFailure = false
    private(set) var connected = false

    init(_ c: WebRTCMediaConfiguration, now: Double) throws {
        agent = ICELiteAgent(
            local: c.local, remote: c.remote, now: now,
            configuration: .init(checkTimeout: c.setupTimeout))
        dtls = try DTLSTransport(context: c.context, role: c.role, peerFingerprints: c.peerFingerprints)
        startedAt = now
        setupTimeout = c.setupTimeout
    }

    func fail(_ why: String) {
        if failure == nil { failure = why }
    }

    /// The failure, the first time it is asked for (the pipeline reports it once).
    func takeFailure() -> String? {
        guard let failure, !reportedFailure else { return nil }
        reportedFailure = true
        return failure
    }

    func markConnected() -> Bool {
        guard !connected else { return false }
        connected = true
        return true
    }
}

extension RTPLeg {
    /// Handles a datagram of a WebRTC leg that is not SRTP (STUN, DTLS); true when it is
    /// SRTP or SRTCP for the RTP path (and only once the keys exist).
    ///
    /// Once ICE has selected a pair, STUN, DTLS and SRTP are taken from its remote address
    /// only (anything else is dropped and counted); before that only STUN is read, which the
    /// agent authenticates (MESSAGE-INTEGRITY with the browser's credentials). A browser that
    /// moves to another network comes back through an ICE restart (a new offer).
    func receiveWebRTC(_ path: WebRTCPath, length: Int, now: Double) -> Bool {
        guard length > 0, path.failure == nil else { return false }
        if path.agent.selected != nil, let remote, source != remote {
            statistics.sourceDropped += 1
            return false
        }
        let first = rxBuffer[0]
        switch PacketKind(firstByte: first) {
        case .stun:
            guard let from = source.address else { return false }
            let bytes = Array(UnsafeRawBufferPointer(rebasing: rxBuffer[0..<length]))
            let reaction = path.agent.receive(bytes, from: from, now: now)
            if let response = reaction.response, let to = RawSocketAddress(reaction.destination) {
                response.withUnsafeBytes { _ = socket.send($0, to: to) }
            }
            if let nominated = reaction.nominated { useNominated(nominated, path: path, now: now) }
            return false
        case .dtls:
            guard path.agent.selected != nil else { return false }  // ICE first: no DTLS from unchecked sources
            let output = path.dtls.receive(UnsafeRawBufferPointer(rebasing: rxBuffer[0..<length]), now: now)
            apply(output, path: path)
            return false
        case .rtp:
            return srtp != nil
        default:
            return false
        }
    }

    /// A new selected pair: media goes there; a DTLS client starts its handshake.
    private func useNominated(_ address: SocketAddress, path: WebRTCPath, now: Double) {
        remote = RawSocketAddress(address)
        statistics.remote = address
        if case .client = dtlsRole(path), path.dtls.state == .handshaking, path.dtls.deadline == nil {
            apply(path.dtls.start(now: now), path: path)
        }
    }

    private func dtlsRole(_ path: WebRTCPath) -> DTLSRole { configuration.webrtc?.role ?? .server }

    /// Sends the handshake's datagrams to the selected address; keys become the leg's SRTP.
    private func apply(_ output: DTLSTransport.Output, path: WebRTCPath) {
        if let to = remote {
            for datagram in output.datagrams { datagram.withUnsafeBytes { _ = socket.send($0, to: to) } }
        }
        if let keys = output.keys, srtp == nil {
            guard let suite = SRTPSuite(rawValue: keys.suiteName),
                let session = try? SRTPSession(
                    SRTPConfiguration(suite: suite, sendKey: keys.sendKey, receiveKey: keys.receiveKey))
            else {
                return path.fail("DTLS-SRTP: the negotiated profile \(keys.suiteName) cannot key SRTP")
            }
            srtp = session
        }
        if let failure = output.failure { path.fail("DTLS: \(failure)") }
        if output.closed { path.fail("DTLS: the browser closed the association") }
    }

    /// Timers: DTLS retransmission, ICE consent (RFC 7675) and the setup deadline. Returns
    /// what the pipeline reports: a failure (once), or that the path is up (once).
    func tickWebRTC(_ path: WebRTCPath, now: Double) -> MediaEvent? {
        if path.failure == nil {
            if let deadline = path.dtls.deadline, now >= deadline {
                apply(path.dtls.handleTimeout(now: now), path: path)
            }
            if case .consentExpired? = path.agent.tick(now: now) {
                remote = nil
                path.fail("ICE: the browser stopped answering consent checks (RFC 7675)")
            }
            if srtp == nil, now - path.startedAt > path.setupTimeout {
                path.fail(
                    path.agent.selected == nil
                        ? "ICE: no connectivity check arrived in \(Int(path.setupTimeout)) s"
                        : "DTLS: the handshake did not finish in \(Int(path.setupTimeout)) s")
            }
        }
        if let failure = path.takeFailure() {
            remote = nil
            return .webrtcFailed(kind, failure)
        }
        if srtp != nil, path.markConnected() { return .webrtcConnected(kind) }
        return nil
    }

    /// rtcp-mux (RFC 5761 §4): RTCP packet types 192-223 in the second byte.
    func isMuxedRTCP(length: Int) -> Bool {
        length >= 2 && (192...223).contains(rxBuffer[1])
    }
}
