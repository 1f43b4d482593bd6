import Foundation
import Media
import MediaStreams

/// What the suite's WebSocket server heard on a fork, in order, and the `stream` step's
/// judgement of it: plain values, so the step only polls and the tests need no socket.
struct StreamCapture: Sendable, Equatable {
    /// The upgrade request's target.
    var path: String?
    /// TCP connections accepted.
    var connections = 0
    var connected: MediaStreamMessage.Connected?
    var start: MediaStreamMessage.Start?
    /// Each track's audio as it came (the start's encoding), bounded by `maxAudioBytes`.
    var audio: [String: [UInt8]] = [:]
    var mediaMessages = 0
    /// The `stop` message came.
    var stopped = false
    /// How the last connection ended ("closed", or the stream layer's failure).
    var closed: String?
    /// What broke Twilio's protocol, the first few.
    private(set) var problems: [String] = []

    /// Ten minutes of 8 kHz mu-law per track: more is not kept.
    static let maxAudioBytes = 8000 * 600
    /// The share of a track's audio a `toneHz` must hold.
    static let toneShare = 0.5

    /// Records what broke the protocol (up to five).
    mutating func note(_ problem: String) {
        if problems.count < 5 { problems.append(problem) }
    }

    /// One text message from the gateway.
    mutating func take(_ text: String) {
        let message: MediaStreamMessage
        do { message = try MediaStreamMessage.decode(text) } catch {
            note("a message Twilio's format does not allow (\(error)): \(text.prefix(80))")
            return
        }
        switch message {
        case .connected(let c):
            if connected != nil || start != nil { note("connected came again") }
            connected = c
        case .start(let s):
            if connected == nil { note("start came before connected") }
            if start != nil { note("start came again") }
            start = s
        case .media(let m):
            mediaMessages += 1
            guard let start else {
                note("media came before start")
                return
            }
            if m.streamSid != start.streamSid { note("media for streamSid \(m.streamSid), not \(start.streamSid)") }
            guard let bytes = Data(base64Encoded: m.media.payload) else {
                note("media chunk \(m.media.chunk) is not base64")
                return
            }
            if audio[m.media.track, default: []].count + bytes.count <= Self.maxAudioBytes {
                audio[m.media.track, default: []] += bytes
            }
        case .stop:
            stopped = true
        case .mark, .dtmf:
            break
        }
    }

    /// Whether the fork `streamSid` of call `callSid` delivered what `step` asks.
    func judge(_ step: StreamStep, streamSid: String, callSid: String?) -> StepVerdict {
        if !problems.isEmpty { return .failed(problems.joined(separator: "; ")) }
        guard connected != nil else {
            return .pending(
                connections == 0
                    ? "the gateway did not connect to the suite's WebSocket" : "no connected message (\(state))")
        }
        guard let start else { return .pending("connected, but no start (\(state))") }
        let meta = start.start
        if start.streamSid != streamSid || meta.streamSid != streamSid {
            return .failed("start names streamSid \(start.streamSid); the fork is \(streamSid)")
        }
        if let callSid, meta.callSid != callSid {
            return .failed("start names callSid \(meta.callSid); the call's roomId is \(callSid)")
        }
        if meta.tracks != step.track.tracks {
            return .failed(
                "start names tracks \(meta.tracks.joined(separator: ", ")); expected \(step.track.tracks.joined(separator: ", "))"
            )
        }
        let format = meta.mediaFormat
        guard format.encoding == "audio/x-mulaw", format.sampleRate == 8000, format.channels == 1 else {
            return .failed(
                "start names \(format.encoding) at \(format.sampleRate) Hz, \(format.channels) channel(s); expected audio/x-mulaw at 8000 Hz, mono"
            )
        }
        for track in step.track.tracks {
            let seconds = Double(audio[track]?.count ?? 0) / 8000
            guard seconds >= step.minAudioSec else {
                return .pending(
                    String(
                        format: "%.2f s of %@ audio of the %.2f s asked (%d media messages in all)", seconds, track,
                        step.minAudioSec, mediaMessages))
            }
            if let hz = step.toneHz {
                var pcm: [Int16] = []
                G711.decodeULaw(audio[track] ?? [], into: &pcm)
                let share = Self.toneShare(hz: hz, in: pcm)
                guard share >= Self.toneShare else {
                    return .pending(
                        share == 0
                            ? String(format: "the %@ audio is silent (expected the %.0f Hz tone)", track, hz)
                            : String(
                                format: "the %.0f Hz tone holds %.0f %% of the %@ audio (expected most of it)", hz,
                                share * 100, track))
                }
            }
        }
        return .passed
    }

    /// "1 connection, closed": what the server saw of the gateway's sockets.
    private var state: String {
        "\(connections) connection\(connections == 1 ? "" : "s")" + (closed.map { ", \($0)" } ?? "")
    }

    /// The mean share of the energy at `hz` over the 100 ms blocks that are not silence (above
    /// -50 dBFS); 0 when all of it is.
    static func toneShare(hz: Double, in samples: [Int16], sampleRate: Int = 8000) -> Double {
        let block = sampleRate / 10
        var shares: [Double] = []
        var at = 0
        while at + block <= samples.count {
            let slice = samples[at..<(at + block)]
            if AudioAnalyzer.dbfs(AudioAnalyzer.meanSquare(slice)) > -50 {
                shares.append(AudioAnalyzer.toneShare(slice, sampleRate: sampleRate, tones: [hz]))
            }
            at += block
        }
        return shares.isEmpty ? 0 : shares.reduce(0, +) / Double(shares.count)
    }
}
