import IOCore
import IrisAPI
import Media
import SIP
import Synchronization

/// What the gateway keeps of one session's trunk leg on the wire: the SIP trace, always
/// (`GET /v1/sessions/{roomId}/sip`), and, when the session asked for a capture, its RTP and
/// RTCP too (`GET /v1/sessions/{roomId}/pcap`). SIP arrives on the SIP loop, media on the
/// session's media thread; both only append under the lock.
final class SessionCapture: MediaPacketTap, Sendable {
    private struct State {
        var trace: SIPTrace
        var recordsMedia: Bool
        var media = CapturedMedia()
        /// Media packets left out past `maxMediaBytes` or the live captures' budget.
        var mediaDropped = 0
        /// Empty and short datagrams (no RTP or RTCP header) left out.
        var mediaIgnored = 0
        /// The session ended: its media stopped counting against the live budget and no
        /// more is taken.
        var closed = false
        /// The media was recorded and then freed (ended captures share a bound).
        var mediaFreed = false
        var callID: String?
        /// Hosts this session's dialogs talk to: where its INVITE came from, and every
        /// address we sent one of its requests to (INVITE targets, the dialog's route).
        var peers: Set<String> = []
        /// Messages with one of its Call-IDs from or to any other host, left out.
        var strangers = 0
    }

    let roomId: String
    /// Past this many bytes of media held (`CapturedMedia.heldBytes`: packets with their
    /// headers and allocations) a capture keeps the SIP and counts what it left out.
    let maxMediaBytes: Int
    /// What all live captures may hold together; nil: no shared bound.
    let budget: CaptureBudget?
    private let state: Mutex<State>
    /// What RTCP reports go to as they pass (HEP), with the session's current Call-ID.
    typealias RTCPTap =
        @Sendable (
            _ bytes: [UInt8], _ sent: Bool, _ local: SocketAddress, _ remote: SocketAddress, _ time: Double,
            _ callID: String?
        ) -> Void
    /// RTCP reports go here as they pass, when a HEP collector is configured.
    let onRTCP: RTCPTap?
    /// The Call-ID of the session's current INVITE (RTCP correlation for HEP).
    var callID: String? {
        get { state.withLock { $0.callID } }
        set { state.withLock { $0.callID = newValue } }
    }

    /// The smallest RTP packet (RFC 3550 §5.1: the fixed header) and RTCP packet (§6.4: a
    /// report's header and SSRC); anything shorter is not recorded.
    static let minimumRTPBytes = 12
    static let minimumRTCPBytes = 8

    init(
        roomId: String, recordsMedia: Bool, maxMediaBytes: Int = 32 << 20, budget: CaptureBudget? = nil,
        trace: SIPTrace = SIPTrace(), onRTCP: RTCPTap? = nil
    ) {
        self.roomId = roomId
        self.maxMediaBytes = maxMediaBytes
        self.budget = budget
        self.onRTCP = onRTCP
        state = Mutex(State(trace: trace, recordsMedia: recordsMedia))
    }

    /// Whether the media engine needs to copy this session's packets at all.
    var needsMediaTap: Bool { onRTCP != nil || state.withLock { $0.recordsMedia } }

    var recordsMedia: Bool { state.withLock { $0.recordsMedia } }

    /// Records media from now on (an inbound session joined with `capture: true`; its media
    /// opens after this).
    func recordMedia() { state.withLock { $0.recordsMedia = true } }

    /// `host` is a peer of this session's dialogs (its INVITE came from there).
    func addPeer(_ host: String) { _ = state.withLock { $0.peers.insert(host) } }

    /// A SIP message with one of this session's Call-IDs, as it crossed the wire. Only its
    /// peers' messages are kept: a request we send names one (the dialog goes there), and
    /// anything else from or to a host that is not one is left out and counted, so knowing
    /// a Call-ID does not let a stranger write into the trace.
    func sip(_ m: SIPWireMessage) {
        let host = m.remote.host
        let sentRequest = m.direction == .sent && !m.isResponse
        let kept = state.withLock { s in
            if sentRequest { s.peers.insert(host) }
            guard s.peers.contains(host) else {
                s.strangers += 1
                return false
            }
            return true
        }
        guard kept else { return }
        let text = String(decoding: m.bytes, as: UTF8.self)
        state.withLock {
            $0.trace.record(
                time: m.time, direction: m.direction, transport: m.transport.rawValue,
                local: m.local.description, remote: m.remote.description, text: text)
        }
    }

    /// Messages with this session's Call-IDs left out because they came from, or went to,
    /// a host that is not one of its peers.
    var strangerMessages: Int { state.withLock { $0.strangers } }

    func mediaPacket(
        _ bytes: UnsafeRawBufferPointer, sent: Bool, rtcp: Bool, local: SocketAddress, remote: SocketAddress,
        time: Double
    ) {
        if rtcp, let onRTCP { onRTCP(Array(bytes), sent, local, remote, time, callID) }
        state.withLock {
            guard $0.recordsMedia, !$0.closed else { return }
            guard bytes.count >= (rtcp ? Self.minimumRTCPBytes : Self.minimumRTPBytes) else {
                $0.mediaIgnored += 1
                return
            }
            let pair = CapturedMedia.Pair(source: sent ? local : remote, destination: sent ? remote : local)
            guard let cost = $0.media.cost(length: bytes.count, pair: pair), $0.media.heldBytes + cost <= maxMediaBytes,
                budget?.take(cost) ?? true
            else {
                $0.mediaDropped += 1
                return
            }
            $0.media.append(time: time, pair: pair, bytes: bytes)
        }
    }

    /// What the capture holds and left out (`GET /v1/sessions/{roomId}/pcap`'s headers).
    struct MediaCounts: Sendable, Equatable {
        var packets: Int
        var heldBytes: Int
        var dropped: Int
        var ignored: Int
    }

    var mediaCounts: MediaCounts {
        state.withLock {
            MediaCounts(
                packets: $0.media.count, heldBytes: $0.media.heldBytes, dropped: $0.mediaDropped,
                ignored: $0.mediaIgnored)
        }
    }

    /// The trace as the API gives it.
    func traceDocument() -> SIPTraceDocument {
        state.withLock { s in
            SIPTraceDocument(
                roomId: roomId,
                messages: s.trace.entries.map {
                    SIPTraceMessage(
                        time: $0.time, direction: $0.direction.rawValue, transport: $0.transport, local: $0.local,
                        remote: $0.remote, text: $0.text, retransmission: $0.retransmission)
                }, dropped: s.trace.dropped)
        }
    }

    /// The SIP entries and the media, for a capture file; nil when media was not recorded.
    /// The media shares its chunks with the capture (nothing is copied here).
    func captured() -> (sip: [SIPTrace.Entry], media: CapturedMedia, mediaDropped: Int)? {
        state.withLock { s in s.recordsMedia ? (s.trace.entries, s.media, s.mediaDropped) : nil }
    }

    /// The session recorded media that has since been freed to keep ended captures within
    /// their shared bound.
    var mediaWasFreed: Bool { state.withLock { $0.mediaFreed } }

    /// Media bytes held (the gateway bounds the sum over ended sessions).
    var mediaBytes: Int { state.withLock { $0.media.heldBytes } }

    /// The session ended: no more media is taken, and what is held leaves the live
    /// captures' budget. Returns the bytes held.
    @discardableResult
    func close() -> Int {
        state.withLock {
            if !$0.closed { budget?.give($0.media.heldBytes) }
            $0.closed = true
            return $0.media.heldBytes
        }
    }

    /// Frees the media records of an ended session (the trace stays).
    func dropMedia() {
        state.withLock {
            if $0.recordsMedia { $0.mediaFreed = true }
            if !$0.closed { budget?.give($0.media.heldBytes) }
            $0.media = CapturedMedia()
            $0.recordsMedia = false
        }
    }
}
