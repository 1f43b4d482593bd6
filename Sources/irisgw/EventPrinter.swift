import Foundation
import IrisAPI
import IrisClient
import Synchronization

/// Prints a session's events for `irisgw call` and `irisgw answer`: one JSON object per
/// line with `--json` (the control API's shape), else a human line per change with the
/// time since the start. The command's thread and the session's event thread both use it:
/// what changes is behind a lock.
final class EventPrinter: IrisRtcAudioSessionDelegate, Sendable {
    let json: Bool
    let start = Date()
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()
    private struct State {
        var onConnected: (@Sendable () -> Void)?
        var connected = false
        var notificationShown = false
    }
    private let state = Mutex(State())

    /// Called on the event thread when the call connects (for timed actions).
    var onConnected: (@Sendable () -> Void)? {
        get { state.withLock { $0.onConnected } }
        set { state.withLock { $0.onConnected = newValue } }
    }
    /// The call connected (once seen, stays true).
    var connected: Bool { state.withLock { $0.connected } }

    init(json: Bool) { self.json = json }

    func line(_ text: String) {
        writeOut(String(format: "[%6.1fs] ", Date().timeIntervalSince(start)) + text + "\n")
    }

    func print(_ event: SessionEvent) {
        if json {
            if let data = try? encoder.encode(event) { writeOut(String(decoding: data, as: UTF8.self) + "\n") }
            return
        }
        let sip =
            event.sip.map {
                " (\($0.code)\($0.reason.isEmpty ? "" : " " + $0.reason)\($0.cause.map { ", Q.850 cause \($0)" } ?? ""))"
            } ?? ""
        switch event.event {
        case .onSessionCreated: line("session \(event.roomId) created (\(event.direction ?? ""))")
        case .onSessionSIPStatus:
            let status = event.status?.rawValue ?? "?"
            let extra = (event.earlyMedia == true ? " with early media" : "") + (event.by.map { " by \($0)" } ?? "")
            line(status + extra + sip)
        case .onSessionEarlyMedia: line("early media from the carrier")
        case .onStreamQualityIndicator: line("audio \(event.codec ?? "?") (\(event.quality ?? "?"))")
        case .onSessionMerged: line("merged with \(event.heldRoomId ?? "?")")
        case .onSessionDTMF: line("DTMF \(event.digit ?? "?") (\(event.durationMs ?? 0) ms)")
        case .onSessionError: line("error \(event.code ?? 0): \(event.message ?? "")" + sip)
        case .onSessionEnded:
            line(
                "ended: \(event.reason?.rawValue ?? "?")" + sip
                    + String(format: ", %.1f s connected", event.durationSec ?? 0))
        case .onSessionTransfer, .onSessionTransferRequest:
            let t = event.transfer
            let what = event.event == .onSessionTransferRequest ? "the carrier asks to transfer" : "transfer"
            let target = t?.targetTN.map { " to \($0)" } ?? t?.replacesRoomId.map { " replacing \($0)" } ?? ""
            line(
                "\(what)\(target): \(t?.state.rawValue ?? "?") (\(t?.method ?? "?") by \(t?.by ?? "?"))" + sip
                    + (event.message.map { ": " + $0 } ?? ""))
        case .onSessionAMD:
            let a = event.amd
            line("answered by: \(a?.result ?? "?") (\(a?.cause ?? "?"), \(a?.ms ?? 0) ms)")
        case .onSessionBeep:
            line(event.beep?.result == "beep" ? "beep ended at \(event.beep?.ms ?? 0) ms" : "no beep")
        case .onSessionStream:
            let st = event.stream
            line(
                "stream \(st?.streamId ?? "?") (\(st?.kind ?? "?")): \(st?.state ?? "?")"
                    + (st?.reason.map { ": " + $0 } ?? ""))
        case .onSessionRecording:
            let r = event.recording
            line(
                "recording \(r?.state ?? "?") (\(r?.format ?? "?"), \(r?.channels ?? 0) ch)"
                    + (r?.durationSec.map { String(format: ", %.1f s", $0) } ?? "")
                    + (r?.reason.map { ": " + $0 } ?? ""))
        case .onSessionEventsDropped:
            line("events \(event.fromSeq ?? 0)-\(event.toSeq ?? 0) were dropped from the session's history (its bound)")
        case .onNotification:
            // STIR/SHAKEN: whether the caller id was signed, and what the verifier made of it.
            let signed =
                event.carrier.map { c in c.verstat.map { " (verstat \($0))" } ?? (c.identity ? " (signed)" : "") } ?? ""
            line(
                "incoming call \(event.roomid ?? "?") from \(event.userdata?.data.cid ?? "?") to \(event.userdata?.data.tar ?? "?")"
                    + signed)
        }
    }

    /// Set when the notification was printed already (the session's replay repeats it).
    var notificationShown: Bool {
        get { state.withLock { $0.notificationShown } }
        set { state.withLock { $0.notificationShown = newValue } }
    }

    func onEvent(_ session: IrisRtcAudioSession, event: SessionEvent) {
        if event.event == .onNotification && event.type == "notify" && notificationShown { return }
        print(event)
        guard event.event == .onSessionSIPStatus, event.status == .connected else { return }
        // The first connected status only; the action runs outside the lock.
        let first = state.withLock { s -> Bool in
            defer { s.connected = true }
            return !s.connected
        }
        if first { onConnected?() }
    }
}

/// Options `call` and `answer` share: where the gateway is and what audio to use.
struct ClientOptions {
    var api = "http://127.0.0.1:8080"
    /// CAs to trust for an https `--api` (`--ca-file`, else `IRISGW_CA_FILE`; nil: the system store).
    var caFile = ProcessInfo.processInfo.environment["IRISGW_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    var dataDir = ".irisgw"
    var toneHz: Double?
    var playWAV: String?
    var recordWAV: String?
    var holdAfter: Double?
    var unholdAfter: Double?
    var hangupAfter: Double?
    var json = false

    /// Takes `option` (just read from `args`) when it is a shared one; false when it is not.
    mutating func parse(_ option: String, _ args: inout ArgumentReader) throws -> Bool {
        switch option {
        case "--api": api = try args.value()
        case "--ca-file": caFile = try args.value()
        case "--data-dir": dataDir = try args.value()
        case "--tone":
            guard let hz = Double(try args.value()), hz > 0, hz < 24_000 else {
                throw UsageError("--tone needs a frequency in Hz")
            }
            toneHz = hz
        case "--play": playWAV = try args.value()
        case "--record": recordWAV = try args.value()
        case "--hold-after": holdAfter = try args.seconds()
        case "--unhold-after": unholdAfter = try args.seconds()
        case "--hangup-after": hangupAfter = try args.seconds()
        case "--json": json = true
        default: return false
        }
        return true
    }

    /// Once the call connects: hold, resume and hang up at the times asked for.
    func scheduleInCall(_ session: IrisRtcAudioSession, _ printer: EventPrinter) {
        after(holdAfter) { do { try session.hold() } catch { printer.line("hold: \(error)") } }
        after(unholdAfter) { do { try session.unhold() } catch { printer.line("unhold: \(error)") } }
        after(hangupAfter) { try? session.close() }
    }

    func connection() throws -> IrisRtcConnection {
        guard let key = IrisRtcConnection.apiKey(dataDir: dataDir) else {
            throw UsageError("no API key: set IRISGW_API_KEY or run the gateway with --data-dir \(dataDir)")
        }
        return try IrisRtcConnection(baseURL: api, apiKey: key, caFile: caFile)
    }

    func stream() throws -> IrisRtcStream {
        if toneHz != nil && playWAV != nil { throw UsageError("--tone and --play exclude each other") }
        if let playWAV { return try IrisRtcStream(wavFile: playWAV) }
        return try IrisRtcStream(source: toneHz.map { .tone(hz: $0, amplitude: 0.3) } ?? .silence)
    }
}

/// Walks a command's arguments: the next option, and the value after it.
struct ArgumentReader {
    private let args: [String]
    private var index = 0
    private var last = ""

    init(_ args: [String]) { self.args = args }

    mutating func next() -> String? {
        guard index < args.count else { return nil }
        defer { index += 1 }
        last = args[index]
        return last
    }

    /// The value after the option just read.
    mutating func value() throws -> String {
        let option = last
        guard let v = next() else { throw UsageError("\(option) needs a value") }
        return v
    }

    /// A non-negative, finite number of seconds after the option just read.
    mutating func seconds() throws -> Double {
        let option = last
        let text = try value()
        guard let s = Double(text), s.isFinite, s >= 0 else {
            throw UsageError("\(option) needs seconds (a number, 0 or more), found \"\(text)\"")
        }
        return s
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Runs `work` after `seconds` on a background queue.
func after(_ seconds: Double?, _ work: @escaping @Sendable () -> Void) {
    guard let seconds else { return }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: work)
}
