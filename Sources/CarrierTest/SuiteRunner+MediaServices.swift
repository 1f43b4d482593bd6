import Foundation
import Glibc
import IOCore
import IrisAPI
import IrisClient

/// A media-service step's judgement of what has come so far.
enum StepVerdict: Equatable {
    case passed
    /// It cannot pass any more: why.
    case failed(String)
    /// Not yet: what is missing.
    case pending(String)

    var isPending: Bool { if case .pending = self { true } else { false } }
}

/// The media-service steps: the answering-machine verdict, a fork of the call's audio to the
/// suite's own WebSocket server, and the recording the gateway serves.
extension SuiteRunner {
    /// `expectAMD` on the events so far: the first `onSessionAMD` decides, and with `beep`
    /// the first `onSessionBeep` too; the call's end before them fails the step at once.
    static func amdVerdict(_ step: AMDStep, in events: [SessionEvent]) -> StepVerdict {
        let ended = events.last { $0.event == .onSessionEnded }
        guard let amd = events.first(where: { $0.event == .onSessionAMD })?.amd else {
            if let ended { return .failed("the call ended \(ended.reason?.rawValue ?? "?") before a verdict") }
            return .pending("no verdict (onSessionAMD) came")
        }
        let verdict = "\(amd.result) (\(amd.cause), after \(amd.ms) ms)"
        guard amd.result == step.result.rawValue else { return .failed("got \(verdict)") }
        guard step.beep else { return .passed }
        guard let beep = events.first(where: { $0.event == .onSessionBeep })?.beep else {
            if let ended {
                return .failed("got \(verdict), then the call ended \(ended.reason?.rawValue ?? "?") before a beep")
            }
            return .pending("got \(verdict) but no onSessionBeep")
        }
        guard beep.result == "beep" else { return .failed("got \(verdict), then \(beep.result) after \(beep.ms) ms") }
        return .passed
    }

    func expectAMD(_ step: AMDStep, events: Collector) throws {
        var verdict = StepVerdict.pending("")
        _ = wait(step.within) {
            verdict = Self.amdVerdict(step, in: events.events)
            return !verdict.isPending
        }
        let want = "expected AMD \(step.result.rawValue)" + (step.beep ? " and a beep" : "")
        switch verdict {
        case .passed: return
        case .failed(let why): throw StepFailure(message: "\(want); \(why)")
        case .pending(let why): throw StepFailure(message: "\(want) within \(step.within) s; \(why)")
        }
    }

    /// Starts the suite's WebSocket server, forks the call's audio to it, judges what comes
    /// until it passes or `within` runs out, then stops the fork and waits for its `stop`.
    func stream(_ step: StreamStep, session: IrisRtcAudioSession) throws {
        guard let room = session.roomId else { throw StepFailure(message: "no call to fork the audio of") }
        let host = Self.streamHost(forAPI: connection.baseURL)
        let server: SuiteStreamServer
        do { server = try SuiteStreamServer(host: host) } catch {
            throw StepFailure(message: "cannot start the suite's WebSocket server on \(host): \(error)")
        }
        defer { server.stop() }
        let fork: StreamInfo
        do { fork = try session.startStream(StreamRequest(url: server.url, track: step.track.rawValue)) } catch {
            throw StepFailure(message: "the gateway refused the stream to \(server.url): \(error)")
        }
        var verdict = StepVerdict.pending("")
        _ = wait(step.within) {
            verdict = server.capture.judge(step, streamSid: fork.streamId, callSid: room)
            return !verdict.isPending
        }
        switch verdict {
        case .passed: break
        case .failed(let why):
            try? session.stopStream(fork.streamId)
            throw StepFailure(message: "the stream to \(server.url): \(why)")
        case .pending(let why):
            try? session.stopStream(fork.streamId)
            throw StepFailure(message: "the stream to \(server.url) within \(step.within) s: \(why)")
        }
        do { try session.stopStream(fork.streamId) } catch {
            throw StepFailure(message: "stopping the stream \(fork.streamId) refused: \(error)")
        }
        guard wait(5, { server.capture.stopped }) else {
            throw StepFailure(message: "the stream \(fork.streamId) sent no stop within 5 s of its DELETE")
        }
    }

    /// GETs the recording every 250 ms until it is what `step` asks or `within` runs out
    /// (the gateway may still be writing it).
    func expectRecording(_ step: RecordingStep, room: String?) throws {
        guard let room else { throw StepFailure(message: "no call to take the recording of") }
        var seen = "nothing was read"
        let ok = wait(step.within, every: 0.25) {
            do {
                let file = try RecordingFile(bytes: try connection.recording(roomId: room))
                guard let wrong = file.mismatch(step) else { return true }
                seen = wrong
            } catch {
                seen = "\(error)"
            }
            return false
        }
        guard ok else {
            throw StepFailure(message: "the recording within \(step.within) s: \(seen)")
        }
    }

    /// Where the suite's WebSocket server listens: the local address the OS would send from
    /// toward the API's host (so a gateway on another machine can reach back), 127.0.0.1
    /// for `localhost` or when that cannot be found.
    static func streamHost(forAPI baseURL: String) -> String {
        guard let host = URL(string: baseURL)?.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]")),
            !host.isEmpty, host != "localhost"
        else { return "127.0.0.1" }
        return localAddress(toward: host) ?? "127.0.0.1"
    }

    /// The source address of a UDP socket connected to `host` (no packet is sent).
    static func localAddress(toward host: String) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "9", &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { return nil }
        return SocketAddress.local(of: fd)?.host
    }
}
