import Foundation
import Glibc
import IrisAPI
import Synchronization
import WebClient

/// `BENCH stream` and `BENCH record`: one release `irisgw serve`, the bench's own carrier
/// (`ToneCarrier`: PCMU with a tone burst a second on every call) and its own platform side
/// (`EchoPlatform`: a voice agent's WebSocket server and RTP reflectors, both echoing at
/// once), all stopped at the end, on failure too. Each phase puts `calls` calls up at once and
/// measures the gateway process's CPU time (/proc, all its threads) over `seconds` of steady
/// audio, then closes them; the phases of one line run against the same gateway, one after
/// the other, so their ratio is measured in one run.
///
/// - stream: calls whose platform leg is the agent's WebSocket (`media.websocket`) against
///   transcoded RTP calls (PCMU trunk, Opus platform leg, reflected): CPU per call as a ratio,
///   and the delay of each burst from the carrier through the gateway to the socket (or the
///   reflector) and back to the carrier.
/// - record: calls recorded as stereo WAV, and as Ogg/Opus, against the same calls unrecorded:
///   CPU per recorded call as a ratio, and bytes on disk per second of recording.
enum MediaServicesBench {
    struct Settings {
        var calls = 30
        /// Seconds measured per phase, after `warmup` seconds of audio.
        var seconds = 4.0
        var warmup = 1.0
        /// Seconds any one step (all connected, all ended ...) may take.
        var stepTimeout = 20.0
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A phase's platform leg.
    enum Leg {
        /// The echo agent's WebSocket.
        case agent
        /// An RTP reflector, Opus (the gateway transcodes); recorded when `recording` is set.
        case rtp(recording: RecordingOptions?)
    }

    /// What a phase measured.
    struct Phase {
        var calls = 0
        /// Gateway CPU milliseconds per call per second of audio.
        var cpuMsPerCallSecond = 0.0
        var carrier = ToneCarrier.Figures()
        /// The recordings of the phase's calls once stopped, by room.
        var recordings: [String: RecordingInfo] = [:]
        var rooms: [String] = []

        /// Two phases of the same kind as one: their mean CPU, all their bursts and delays.
        func merged(with other: Phase) -> Phase {
            var m = self
            m.cpuMsPerCallSecond = (cpuMsPerCallSecond + other.cpuMsPerCallSecond) / 2
            m.carrier.delaysMs += other.carrier.delaysMs
            m.carrier.bursts += other.carrier.bursts
            m.carrier.lost += other.carrier.lost
            m.recordings.merge(other.recordings) { $1 }
            m.rooms += other.rooms
            return m
        }
    }

    /// The `BENCH stream` line (`skipped="<why>"` when the run could not be made).
    static func stream(irisgw: String, settings: Settings = Settings()) -> String {
        do {
            return try Rig.with(irisgw: irisgw, settings) { rig in
                // In the order RTP, stream, stream, RTP: a machine load that drifts evenly
                // over the run weighs on both kinds alike.
                let rtp1 = try rig.phase(.rtp(recording: nil))
                let stream = try rig.phase(.agent).merged(with: try rig.phase(.agent))
                let rtp = rtp1.merged(with: try rig.phase(.rtp(recording: nil)))
                let echoed = rig.platform.echoed.load(ordering: .relaxed)
                let p = GatewayProbe.percentile
                func ms(_ v: Double) -> String { String(format: "%.1f", v) }
                let (s, r) = (stream.carrier, rtp.carrier)
                var line = "BENCH stream calls=\(settings.calls) seconds=\(formatted(settings.seconds))"
                line += " stream_cpu_ms_per_call_s=\(String(format: "%.2f", stream.cpuMsPerCallSecond))"
                line += " rtp_cpu_ms_per_call_s=\(String(format: "%.2f", rtp.cpuMsPerCallSecond))"
                line += " ratio=\(String(format: "%.2f", stream.cpuMsPerCallSecond / rtp.cpuMsPerCallSecond))"
                line += " delay_p50_ms=\(ms(p(s.delaysMs, 0.5))) delay_p99_ms=\(ms(p(s.delaysMs, 0.99)))"
                line += " rtp_delay_p50_ms=\(ms(p(r.delaysMs, 0.5))) rtp_delay_p99_ms=\(ms(p(r.delaysMs, 0.99)))"
                line += " bursts=\(s.bursts) bursts_echoed=\(s.delaysMs.count) bursts_lost=\(s.lost)"
                line += " rtp_bursts=\(r.bursts) rtp_bursts_echoed=\(r.delaysMs.count)"
                line +=
                    " agent_media_echoed=\(echoed) agent=swift load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
                return line
            }
        } catch {
            return "BENCH stream skipped=\"\(error)\""
        }
    }

    /// The `BENCH record` (stereo WAV) and `BENCH record-ogg` lines.
    static func record(irisgw: String, settings: Settings = Settings()) -> [String] {
        do {
            return try Rig.with(irisgw: irisgw, settings) { rig in
                // Unrecorded calls before and after (their mean), the recorded ones between.
                let plain1 = try rig.phase(.rtp(recording: nil))
                let wav = try rig.phase(.rtp(recording: RecordingOptions(channels: 2, format: "wav")))
                let ogg = try rig.phase(.rtp(recording: RecordingOptions(channels: 2, format: "ogg")))
                let plain = plain1.merged(with: try rig.phase(.rtp(recording: nil)))
                return [("record", "wav", wav), ("record-ogg", "ogg", ogg)].map { name, format, phase in
                    let seconds = phase.recordings.values.compactMap(\.durationSec).reduce(0, +)
                    let bytes = rig.bytesOnDisk(phase.rooms)
                    var line = "BENCH \(name) calls=\(settings.calls) format=\(format) channels=2"
                    line += " plain_cpu_ms_per_call_s=\(String(format: "%.2f", plain.cpuMsPerCallSecond))"
                    line += " recorded_cpu_ms_per_call_s=\(String(format: "%.2f", phase.cpuMsPerCallSecond))"
                    line += " ratio=\(String(format: "%.2f", phase.cpuMsPerCallSecond / plain.cpuMsPerCallSecond))"
                    line += " disk_bytes_per_call_s=\(seconds > 0 ? formatted(Double(bytes) / seconds) : "skipped")"
                    if format == "wav" { line += " expected_bytes_per_call_s=32000" }
                    line += " recordings=\(phase.recordings.count) recorded_s=\(String(format: "%.1f", seconds))"
                    line += " disk_bytes=\(bytes) load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
                    return line
                }
            }
        } catch {
            return ["BENCH record skipped=\"\(error)\"", "BENCH record-ogg skipped=\"\(error)\""]
        }
    }

    /// The processes and sockets of one line's run.
    struct Rig {
        let gw: BridgeBench.Gateway
        let carrier: ToneCarrier
        let platform: EchoPlatform
        let router: BridgeBench.EventRouter
        let client: HTTPClient
        let settings: Settings

        /// Starts the carrier, the platform side and a gateway routed to the carrier; runs
        /// `body`; stops them all, whatever happens.
        static func with<T>(irisgw: String, _ settings: Settings, _ body: (Rig) throws -> T) throws -> T {
            let carrier = try ToneCarrier()
            defer { carrier.stop() }
            let platform = try EchoPlatform()
            defer { platform.stop() }
            let gw = try BridgeBench.startGateway(
                irisgw: irisgw, carrierPort: carrier.port,
                name: "irisgw-bench-\(getpid())-media-\(UUID().uuidString.prefix(8))")
            defer { gw.stop() }
            let router = try BridgeBench.EventRouter(api: gw.api, key: gw.key)
            defer { router.close() }
            let client = try HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
            return try body(
                Rig(gw: gw, carrier: carrier, platform: platform, router: router, client: client, settings: settings))
        }

        /// `calls` calls with `leg` up, measured, closed and ended.
        func phase(_ leg: Leg) throws -> Phase {
            let s = settings
            var phase = Phase(calls: s.calls)
            defer { platform.closeReflectors() }
            for _ in 0..<s.calls {
                var media = MediaBody(websocket: MediaWebSocket(url: platform.url))
                var recording: RecordingOptions?
                if case .rtp(let r) = leg {
                    media = MediaBody(sdp: BridgeBench.offer(port: try platform.reflector()))
                    recording = r
                }
                let body = CreateSessionRequest(
                    targetTN: "+15551230001", sourceTN: "+15557654321", routingId: "bench", media: media,
                    recording: recording)
                switch BridgeBench.creating(client, body) {
                case .success(let session): phase.rooms.append(session.roomId)
                case .failure(let why):
                    close(phase.rooms)
                    throw Failure(description: "create: \(why)")
                }
            }
            defer { close(phase.rooms) }
            for room in phase.rooms where !router.wait(room, timeout: s.stepTimeout, { $0.status == .connected }) {
                throw Failure(description: "a call did not connect in \(Int(s.stepTimeout)) s")
            }
            if case .agent = leg {
                guard
                    GatewayProbe.waitFor(
                        timeout: s.stepTimeout, { platform.agents.load(ordering: .relaxed) >= s.calls })
                else { throw Failure(description: "the agent's sockets did not all open") }
            }
            // Let the jitter buffers and the agents' playout settle, then measure.
            Thread.sleep(forTimeInterval: s.warmup)
            carrier.startMeasuring()
            let cpu0 = gw.cpuSeconds, wall0 = Date()
            Thread.sleep(forTimeInterval: s.seconds)
            let cpu = gw.cpuSeconds - cpu0, wall = Date().timeIntervalSince(wall0)
            phase.carrier = carrier.stopMeasuring()
            phase.cpuMsPerCallSecond = cpu * 1000 / Double(s.calls) / wall
            if case .rtp(.some) = leg {
                // Stopped through the API while the call lives, so the app hears the file's
                // duration and size (a recording that ends with its call is not announced).
                for room in phase.rooms { try stopRecording(room) }
                for room in phase.rooms {
                    guard router.wait(room, timeout: s.stepTimeout, { $0.recording?.state == "stopped" }) else {
                        throw Failure(description: "a recording did not stop in \(Int(s.stepTimeout)) s")
                    }
                }
                phase.recordings = recordings(phase.rooms)
            }
            close(phase.rooms)
            guard GatewayProbe.waitFor(timeout: s.stepTimeout, { carrier.live == 0 }) else {
                throw Failure(description: "the carrier still has calls")
            }
            return phase
        }

        /// Closes `rooms` (those ended already say so) and waits for their ends.
        func close(_ rooms: [String]) {
            for room in rooms { _ = BridgeBench.close(client, roomId: room, within: 5) }
            for room in rooms { _ = router.wait(room, timeout: settings.stepTimeout) { $0.event == .onSessionEnded } }
        }

        /// `POST .../recording` `stop`.
        func stopRecording(_ room: String) throws {
            let body = try JSONEncoder().encode(RecordingRequest(action: "stop"))
            let r = try client.request(
                method: "POST", path: "/v1/sessions/\(room)/recording", body: Array(body), timeout: settings.stepTimeout
            )
            guard (200..<300).contains(r.status) else {
                throw Failure(description: "recording stop: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            }
        }

        /// Each room's last `onSessionRecording` (its stopped recording).
        func recordings(_ rooms: [String]) -> [String: RecordingInfo] {
            var out: [String: RecordingInfo] = [:]
            for room in rooms {
                _ = router.wait(room, timeout: 0) { event in
                    if let r = event.recording, r.state == "stopped" { out[room] = r }
                    return false
                }
            }
            return out
        }

        /// Bytes of the files under the data directory's `recordings` named for `rooms`.
        func bytesOnDisk(_ rooms: [String]) -> Int {
            let directory = gw.dataDirectory.appendingPathComponent("recordings")
            let names = Set(rooms)
            guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
            else { return 0 }
            var total = 0
            for case let file as URL in files {
                let stem = file.deletingPathExtension().lastPathComponent
                guard names.contains(stem) else { continue }
                total += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) ?? 0
            }
            return total
        }
    }
}
