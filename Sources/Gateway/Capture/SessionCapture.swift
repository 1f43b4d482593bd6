import IOCore
import IrisAPI
import Media
import SIP
import Synchronization

/// What the gateway keeps of one session's trunk leg on the wire: the SIP trace, always
/// (`GET /v1/sessions/{roomId}/sip`), and, when the session asked for a capture, its RTP and
/// RTCP too (`GET /v1/sessions/{roomId}/pcap`). SIP arrives on the SIP loop, media on the
/// session's media thread; both only append under the lock.
final class SessionCapture: MediaPacketTap, @unchecked Sendable {  // state behind `state`
    /// One media packet as captured (RTP or RTCP, plain).
    struct MediaRecord: Sendable {
        var time: Double
        var source: SocketAddress
        var destination: SocketAddress
        var bytes: [UInt8]
    }

    private struct State {
        var trace: SIPTrace
        var recordsMedia: Bool
        var media: [MediaRecord] = []
        var mediaBytes = 0
        /// Media packets left out past `maxMediaBytes`.
        var mediaDropped = 0
        /// The media was recorded and then freed (ended captures share a bound).
        var mediaFreed = false
        var callID: String?
    }

    let roomId: String
    /// Past this many bytes of media a capture keeps the SIP and counts what it left out.
    let maxMediaBytes: Int
    private let state: Mutex<State>
    /// RTCP reports go here as they pass (HEP), when a collector is configured. Set once,
    /// before the session's media opens.
    var onRTCP: (@Sendable (_ bytes: [UInt8], _ sent: Bool, _ local: SocketAddress, _ remote: SocketAddress, _ time: Double) -> Void)?
    /// The Call-ID of the session's current INVITE (RTCP correlation for HEP).
    var callID: String? {
        get { state.withLock { $0.callID } }
        set { state.withLock { $0.callID = newValue } }
    }

    init(roomId: String, recordsMedia: Bool, maxMediaBytes: Int = 32 << 20, trace: SIPTrace = SIPTrace()) {
        self.roomId = roomId
        self.maxMediaBytes = maxMediaBytes
        state = Mutex(State(trace: trace, recordsMedia: recordsMedia))
    }

    /// Whether the media engine needs to copy this session's packets at all.
    var needsMediaTap: Bool { onRTCP != nil || state.withLock { $0.recordsMedia } }

    var recordsMedia: Bool { state.withLock { $0.recordsMedia } }

    /// Records media from now on (an inbound session joined with `capture: true`; its media
    /// opens after this).
    func recordMedia() { state.withLock { $0.recordsMedia = true } }

    /// A SIP message of this session, as it crossed the wire.
    func sip(_ m: SIPWireMessage) {
        let text = String(decoding: m.bytes, as: UTF8.self)
        state.withLock {
            $0.trace.record(time: m.time, direction: m.direction, transport: m.transport.rawValue,
                            local: m.local.description, remote: m.remote.description, text: text)
        }
    }

    func mediaPacket(_ bytes: UnsafeRawBufferPointer, sent: Bool, rtcp: Bool, local: SocketAddress, remote: SocketAddress, time: Double) {
        if rtcp, let onRTCP { onRTCP(Array(bytes), sent, local, remote, time) }
        state.withLock {
            guard $0.recordsMedia else { return }
            guard $0.mediaBytes + bytes.count <= maxMediaBytes else {
                $0.mediaDropped += 1
                return
            }
            $0.media.append(MediaRecord(time: time, source: sent ? local : remote, destination: sent ? remote : local, bytes: Array(bytes)))
            $0.mediaBytes += bytes.count
        }
    }

    /// The trace as the API gives it.
    func traceDocument() -> SIPTraceDocument {
        state.withLock { s in
            SIPTraceDocument(roomId: roomId, messages: s.trace.entries.map {
                SIPTraceMessage(time: $0.time, direction: $0.direction.rawValue, transport: $0.transport, local: $0.local,
                                remote: $0.remote, text: $0.text, retransmission: $0.retransmission)
            }, dropped: s.trace.dropped)
        }
    }

    /// The SIP entries and media records, for a capture file; nil when media was not recorded.
    func captured() -> (sip: [SIPTrace.Entry], media: [MediaRecord], mediaDropped: Int)? {
        state.withLock { s in s.recordsMedia ? (s.trace.entries, s.media, s.mediaDropped) : nil }
    }

    /// The session recorded media that has since been freed to keep ended captures within
    /// their shared bound.
    var mediaWasFreed: Bool { state.withLock { $0.mediaFreed } }

    /// Media bytes held (the gateway bounds the sum over ended sessions).
    var mediaBytes: Int { state.withLock { $0.mediaBytes } }

    /// Frees the media records of an ended session (the trace stays).
    func dropMedia() {
        state.withLock {
            if $0.recordsMedia { $0.mediaFreed = true }
            $0.media = []
            $0.mediaBytes = 0
            $0.recordsMedia = false
        }
    }
}
