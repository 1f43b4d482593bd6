import Formats
import IrisAPI
import Media
import Synchronization

/// Counters behind `/metrics` (Prometheus text). Thread-safe; updated on the SIP loop.
public final class GatewayMetrics: Sendable {
    private struct Counts {
        var started = 0
        var inboundInvites = 0
        var ended: [EndReason: Int] = [:]
        var packetsReceived = 0
        var packetsSent = 0
        var packetsLost: Int64 = 0
        var concealed = 0
        var late = 0
        var jitterSumMs = 0.0
        var jitterSamples = 0
        var registrations: [String: String] = [:]
        var inviteResponses: [Int: Int] = [:]
        var refused: [String: Int] = [:]
        var tlsFailures: [String: Int] = [:]
        var srtpAuthFailures = 0
        var srtpReplays = 0
        var sourceDropped: [MediaLeg: Int] = [:]
        var srtpRefused = 0
        var mediaRefused: [SessionMachine.Direction: Int] = [:]
        var amdVerdicts: [String: Int] = [:]
        var streams: [String: Int] = [:]
        var recordings = 0
        var siprecEnded: [String: Int] = [:]
    }
    private let counts = Mutex(Counts())

    public init() {}

    func started() { counts.withLock { $0.started += 1 } }
    func inboundInvite() { counts.withLock { $0.inboundInvites += 1 } }
    func ended(_ reason: EndReason) { counts.withLock { $0.ended[reason, default: 0] += 1 } }
    func inviteResponse(_ code: Int) { counts.withLock { $0.inviteResponses[code, default: 0] += 1 } }
    /// Counts one input refused by a bound or a defence; `what` is the metric's label
    /// (`json_too_deep`, `sip_rate_limited` ...).
    public func refused(_ what: String, count: Int = 1) { counts.withLock { $0.refused[what, default: 0] += count } }
    /// Counts one failed TLS connection, by what failed (`TLSFailure.kind`).
    func tlsFailure(_ kind: String) { counts.withLock { $0.tlsFailures[kind, default: 0] += 1 } }
    /// Counts one SDP the trunk's SRTP policy refused (no usable keys where they are required).
    func srtpRefused() { counts.withLock { $0.srtpRefused += 1 } }
    /// Counts one new session refused because the media threads were at their load budget.
    func mediaRefused(_ direction: SessionMachine.Direction) {
        counts.withLock { $0.mediaRefused[direction, default: 0] += 1 }
    }
    /// Counts one answering-machine verdict (`human`, `machine`, `fax`, `unknown`).
    func amd(_ verdict: String) { counts.withLock { $0.amdVerdicts[verdict, default: 0] += 1 } }
    /// Counts one media stream opened (`agent` or `fork`).
    func streamOpened(_ kind: String) { counts.withLock { $0.streams[kind, default: 0] += 1 } }
    /// Counts one SIPREC session ended: `stopped` (ours to end) or `failed`.
    func siprecEnded(_ outcome: String) { counts.withLock { $0.siprecEnded[outcome, default: 0] += 1 } }
    /// Counts one recording started.
    func recordingStarted() { counts.withLock { $0.recordings += 1 } }
    func registration(profile: String, state: String) { counts.withLock { $0.registrations[profile] = state } }
    /// A profile a reload removed (or whose registration it turned off) leaves the gauge.
    func forgetRegistration(profile: String) { counts.withLock { $0.registrations[profile] = nil } }

    func media(_ stats: [MediaLeg: MediaLegStatistics]) {
        counts.withLock { c in
            for (leg, s) in stats {
                c.packetsReceived += s.packetsReceived
                c.packetsSent += s.packetsSent
                c.packetsLost += s.packetsLost
                c.concealed += s.concealed
                c.late += s.late
                c.srtpAuthFailures += s.srtpAuthFailures
                c.srtpReplays += s.srtpReplays
                c.sourceDropped[leg, default: 0] += s.sourceDropped
                c.refused["dtmf_rate_limited", default: 0] += s.dtmfDropped
            }
            if let t = stats[.trunk], t.packetsReceived > 0 {
                c.jitterSumMs += t.jitterMs
                c.jitterSamples += 1
            }
        }
    }

    /// The Prometheus text exposition. `statuses` are the live sessions' statuses;
    /// `sipResponses` the SIP layer's counts by status code.
    /// `refusals` are counts kept by other layers (the SIP agent's, the HTTP server's), merged
    /// with the gateway's own under `irisgw_refused_total`.
    /// `sipTransactions` and `heapTrims` are the SIP agent's live transactions and heap trims;
    /// `mediaThreads` the media engine's thread count.
    public func render(
        statuses: [SessionStatus], sipResponses: [Int: Int], lateFrames: Int = 0,
        refusals: [String: Int] = [:], recordWrites: (lost: Int, pending: Int) = (0, 0),
        sipTransactions: Int = 0, heapTrims: Int = 0, mediaThreads: Int? = nil,
        mediaLoad: (threads: [MediaThreadLoad], budget: Double)? = nil
    ) -> String {
        let c = counts.withLock { $0 }
        let refused = c.refused.merging(refusals, uniquingKeysWith: +)
        var out = PrometheusText()
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out.metric(name, type, help, samples.map { (labels: $0.0, value: $0.1) })
        }
        let byStatus = Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count)
        metric(
            "irisgw_sessions_active", "gauge", "Live sessions by status.",
            [SessionStatus.initializing, .connecting, .connected, .hold].map {
                ("{status=\"\($0.rawValue)\"}", String(byStatus[$0] ?? 0))
            })
        metric(
            "irisgw_sessions_started_total", "counter", "Sessions started (both directions).", [("", String(c.started))]
        )
        metric(
            "irisgw_sessions_ended_total", "counter", "Sessions ended, by reason.",
            EndReason.allCases.map { ("{reason=\"\($0.rawValue)\"}", String(c.ended[$0] ?? 0)) })
        metric(
            "irisgw_amd_verdicts_total", "counter", "Answering-machine detection verdicts, by result.",
            ["human", "machine", "fax", "unknown"].map { ("{result=\"\($0)\"}", String(c.amdVerdicts[$0] ?? 0)) })
        metric(
            "irisgw_media_streams_total", "counter", "WebSocket media streams opened, by kind.",
            ["agent", "fork"].map { ("{kind=\"\($0)\"}", String(c.streams[$0] ?? 0)) })
        metric("irisgw_recordings_total", "counter", "Call recordings started.", [("", String(c.recordings))])
        metric(
            "irisgw_siprec_sessions_total", "counter", "SIPREC sessions ended, by outcome.",
            ["stopped", "failed"].map { ("{outcome=\"\($0)\"}", String(c.siprecEnded[$0] ?? 0)) })
        metric("irisgw_inbound_invites_total", "counter", "New INVITEs from trunks.", [("", String(c.inboundInvites))])
        metric(
            "irisgw_sip_responses_total", "counter", "SIP responses sent without a transaction user, by code.",
            sipResponses.keys.sorted().map { ("{code=\"\($0)\"}", String(sipResponses[$0]!)) })
        metric(
            "irisgw_sip_transactions_active", "gauge", "SIP transactions alive (client and server).",
            [("", String(sipTransactions))])
        metric(
            "irisgw_heap_trims_total", "counter",
            "Times freed heap was returned to the system after a transaction flood ended.",
            [("", String(heapTrims))])
        metric(
            "irisgw_sip_invite_final_responses_total", "counter",
            "Final responses to the gateway's INVITEs toward trunks, by code.",
            c.inviteResponses.keys.sorted().map { ("{code=\"\($0)\"}", String(c.inviteResponses[$0]!)) })
        metric(
            "irisgw_media_packets_received_total", "counter", "RTP packets received (ended sessions).",
            [("", String(c.packetsReceived))])
        metric(
            "irisgw_media_packets_sent_total", "counter", "RTP packets sent (ended sessions).",
            [("", String(c.packetsSent))])
        metric(
            "irisgw_media_packets_lost_total", "counter", "RTP packets lost (RFC 3550 A.3, ended sessions).",
            [("", String(c.packetsLost))])
        metric(
            "irisgw_media_concealed_frames_total", "counter", "Frames concealed (PLC/FEC).", [("", String(c.concealed))]
        )
        metric(
            "irisgw_media_late_packets_total", "counter", "Packets too late for the jitter buffer.",
            [("", String(c.late))])
        if let mediaThreads {
            metric(
                "irisgw_media_threads", "gauge",
                "Media threads (one per CPU the process may use, or the mediaThreads setting).",
                [("", String(mediaThreads))])
        }
        if let mediaLoad {
            metric(
                "irisgw_media_thread_load", "gauge", "Each media thread's busy fraction of a CPU over the last second.",
                mediaLoad.threads.enumerated().map { ("{thread=\"\($0.offset)\"}", format3($0.element.busy)) })
            metric(
                "irisgw_media_thread_calls", "gauge", "Calls on each media thread.",
                mediaLoad.threads.enumerated().map { ("{thread=\"\($0.offset)\"}", String($0.element.calls)) })
            metric(
                "irisgw_media_load_budget", "gauge",
                "The busy fraction past which new sessions are refused (mediaLoadBudgetPercent).",
                [("", format3(mediaLoad.budget))])
        }
        metric(
            "irisgw_media_admission_refused_total", "counter",
            "New sessions refused (503, Retry-After) because the media threads were at their load budget.",
            [SessionMachine.Direction.inbound, .outbound].map {
                ("{direction=\"\($0.rawValue)\"}", String(c.mediaRefused[$0] ?? 0))
            })
        metric(
            "irisgw_media_late_frames_total", "counter", "Frames the media threads played late (missed 20 ms ticks).",
            [("", String(lateFrames))])
        metric(
            "irisgw_media_trunk_jitter_ms_avg", "gauge", "Mean interarrival jitter on trunk legs (ended sessions).",
            [("", String(format2(c.jitterSamples > 0 ? c.jitterSumMs / Double(c.jitterSamples) : 0)))])
        metric(
            "irisgw_refused_total", "counter", "Inputs refused by a bound or a defence, by what was refused.",
            refused.keys.sorted().map { ("{what=\"\($0)\"}", String(refused[$0]!)) })
        metric(
            "irisgw_sip_tls_failures_total", "counter", "TLS connections that failed, either way, by what failed.",
            c.tlsFailures.keys.sorted().map { ("{kind=\"\($0)\"}", String(c.tlsFailures[$0]!)) })
        metric(
            "irisgw_srtp_dropped_total", "counter",
            "SRTP and SRTCP packets dropped unplayed (ended sessions), by why: auth (tampered or wrong key), replay.",
            [("{reason=\"auth\"}", String(c.srtpAuthFailures)), ("{reason=\"replay\"}", String(c.srtpReplays))])
        metric(
            "irisgw_media_source_dropped_total", "counter",
            "RTP, RTCP, DTLS and STUN packets dropped because they did not come from the call's peer (ended sessions), by leg.",
            MediaLeg.allCases.map { ("{leg=\"\($0.rawValue)\"}", String(c.sourceDropped[$0] ?? 0)) })
        metric(
            "irisgw_srtp_refused_total", "counter", "Trunk SDP refused by the SRTP policy (media.encryption) with 488.",
            [("", String(c.srtpRefused))])
        metric(
            "irisgw_record_writes_lost_total", "counter",
            "Call record writes that could not be made (logged to stderr).",
            [("", String(recordWrites.lost))])
        metric(
            "irisgw_record_writes_pending", "gauge",
            "Call record writes a full disk refused, kept and retried every second.",
            [("", String(recordWrites.pending))])
        metric(
            "irisgw_trunk_registered", "gauge", "1 when the trunk's registration is up.",
            c.registrations.keys.sorted().map {
                ("{profile=\"\($0)\"}", c.registrations[$0]!.hasPrefix("registered") ? "1" : "0")
            })
        ProcessMetrics.current()?.render(into: &out)
        return out.text
    }

    private func format2(_ v: Double) -> String { String((v * 100).rounded() / 100) }
    private func format3(_ v: Double) -> String { String((v * 1000).rounded() / 1000) }
}
