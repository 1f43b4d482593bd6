import Foundation
import IOCore
import IrisAPI
import IrisClient
import Synchronization

/// What one test call measured and how it went.
public struct TestCallResult: Sendable, Codable, Equatable {
    public var test: String
    public var iteration: Int
    public var passed: Bool
    /// The failing step (1-based) and what was expected against what happened.
    public var failedStep: Int?
    public var failure: String?
    public var durationSec: Double
    public var roomId: String?
    /// INVITE to the first 18x (post-dial delay), and to the answer.
    public var postDialDelayMs: Int?
    public var answerMs: Int?
    public var codec: String?
    public var endReason: String?
    public var sipCode: Int?
    public var q850Cause: Int?
    public var packetsLost: Int64?
    public var jitterMs: Double?
    public var roundTripMs: Double?
    /// E-model (ITU-T G.107, simplified) from codec, loss and delay; nil without media.
    public var mos: Double?
    /// Tone onset to its return through an echoing number (both jitter buffers included).
    public var audioRoundTripMs: Int?
    /// The end's Q.850 cause fits its SIP code (RFC 3398 / RFC 4497 mapping); nil without a cause.
    public var causeConsistent: Bool?
    /// The call was answered with a codec of our offer.
    public var sdpSane: Bool?
    /// Samples every 250 ms: packets received, the echo tone's level, the trunk's jitter.
    public var timeline: [TimelinePoint]
    /// Every event of the call, for the ladder.
    public var events: [SessionEvent]
    /// The SIP messages of the trunk leg as the gateway sent and read them
    /// (`GET /v1/sessions/{roomId}/sip`); nil when the gateway could not give them.
    public var sip: SIPTraceDocument?
    /// The files kept for this call with `--evidence DIR`, relative to the reports.
    public var evidence: TestEvidence?
    /// The `audioQuality` steps' measurements, in step order; nil when the test has none
    /// (and in results written before the step existed).
    public var audio: [AudioCheck]?
}

/// The evidence files of one test call (`irisgw test --evidence DIR`): paths as the
/// reports link them.
public struct TestEvidence: Sendable, Codable, Equatable {
    /// `DIR/<test>-<n>.pcap`: the trunk leg's SIP and RTP.
    public var pcap: String?
    /// `DIR/<test>-<n>-carrier.wav`: the audio the carrier sent.
    public var carrierWAV: String?
    /// `DIR/<test>-<n>-app.wav`: the audio the gateway sent the carrier (the app's side).
    public var appWAV: String?

    public init(pcap: String? = nil, carrierWAV: String? = nil, appWAV: String? = nil) {
        self.pcap = pcap
        self.carrierWAV = carrierWAV
        self.appWAV = appWAV
    }
}

/// One sample of a call's audio for the report's timeline.
public struct TimelinePoint: Sendable, Codable, Equatable {
    public var ms: Int
    public var packets: Int
    public var echoLevel: Double
    public var jitterMs: Double?
}

/// Runs a suite's calls one after another through a gateway's control API and judges each
/// step. `progress` gets a human line as each test starts and finishes.
public struct SuiteRunner: Sendable {
    public let connection: IrisRtcConnection
    public let profile: String?
    public let progress: @Sendable (String) -> Void
    /// Where each call's capture and recordings go (`--evidence DIR`); nil keeps none.
    public var evidenceDirectory: String?
    /// Test calls in progress at once (`irisgw test --parallel N`). Default 1: one after
    /// another. Results keep the suite's order whatever order the calls end in.
    public var parallel = 1

    public init(
        connection: IrisRtcConnection, profile: String?, evidenceDirectory: String? = nil,
        progress: @escaping @Sendable (String) -> Void
    ) {
        self.connection = connection
        self.profile = profile
        self.evidenceDirectory = evidenceDirectory
        self.progress = progress
    }

    public func run(_ suite: TestSuite) -> [TestCallResult] {
        guard parallel > 1 else { return run(suite, shouldStop: { false }) ?? [] }
        let jobs = suite.tests.flatMap { test in (1...test.repeatCount).map { (test, $0) } }
        let results = Mutex([TestCallResult?](repeating: nil, count: jobs.count))
        let next = Atomic<Int>(0)
        // Each worker takes the next call when its own ends: at most `parallel` at once.
        runOnThreads(min(parallel, jobs.count)) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < jobs.count else { return }
                let (test, i) = jobs[index]
                let r = runAndReport(test, iteration: i)
                results.withLock { $0[index] = r }
            }
        }
        return results.withLock { $0.compactMap { $0 } }
    }

    /// One test call, with its progress lines.
    private func runAndReport(_ test: TestCase, iteration i: Int) -> TestCallResult {
        let label = test.repeatCount > 1 ? "\(test.name) #\(i)" : test.name
        progress("▶ \(label): dialling \(test.target)")
        let r = runCall(test, iteration: i)
        // The failure is text, never part of a format (it may hold "%").
        let time = String(format: "%.1f s", r.durationSec)
        progress(
            r.passed ? "✔ \(label) (\(time))" : "✘ \(label) (\(time)): step \(r.failedStep ?? 0): \(r.failure ?? "")")
        return r
    }

    /// Like `run(_:)`, but asks `shouldStop` before each call: once it says yes, no other
    /// call starts (the one in progress has finished) and nil is returned for the
    /// incomplete run. For `irisgw test --every`, which stops on SIGTERM.
    public func run(_ suite: TestSuite, shouldStop: () -> Bool) -> [TestCallResult]? {
        var results: [TestCallResult] = []
        for test in suite.tests {
            for i in 1...test.repeatCount {
                if shouldStop() { return nil }
                results.append(runAndReport(test, iteration: i))
            }
        }
        return results
    }

    /// Collects a session's events as they come.
    final class Collector: IrisRtcAudioSessionDelegate, Sendable {
        private let list = Mutex<[SessionEvent]>([])
        var events: [SessionEvent] { list.withLock { $0 } }
        func onEvent(_ session: IrisRtcAudioSession, event: SessionEvent) { list.withLock { $0.append(event) } }
    }

    struct StepFailure: Error { var message: String }

    func runCall(_ test: TestCase, iteration: Int) -> TestCallResult {
        let start = Date()
        var result = TestCallResult(
            test: test.name, iteration: iteration, passed: false, durationSec: 0, timeline: [], events: [])
        let collector = Collector()
        let stream: IrisRtcStream
        let source: AudioSource = test.silent ? .silence : .tone(hz: test.toneHz, amplitude: 0.3)
        do { stream = try IrisRtcStream(source: source) } catch {
            result.failure = "cannot open the test client's media: \(error)"
            return result
        }
        let session = IrisRtcAudioSession(connection: connection, stream: stream, delegate: collector)
        defer { session.stop() }
        let sampler = Sampler(leg: stream.leg, toneHz: test.toneHz, connection: connection, start: start)
        sampler.run { session.roomId }
        defer { sampler.stop() }
        var stepIndex = 0
        // Status steps match in order: each looks at the events after the last one matched,
        // so `Connected`, `Hold`, `Connected` checks a resume, not the first answer twice.
        var cursor = 0
        // `expectTransfer` steps match in order too, among the transfer events.
        var transferCursor = 0
        var audio: [AudioCheck] = []
        do {
            do {
                result.roomId = try session.createWithTN(
                    targetTN: test.target, sourceTN: test.source, profile: profile,
                    capture: evidenceDirectory != nil, recording: test.recording, amd: test.amd)
            } catch {
                throw StepFailure(message: "the gateway refused the call: \(error)")
            }
            for (i, step) in test.steps.enumerated() {
                stepIndex = i + 1
                do {
                    if let rtt = try perform(
                        step, number: i + 1, session: session, events: collector, cursor: &cursor,
                        transferCursor: &transferCursor, audio: &audio, room: result.roomId),
                        result.audioRoundTripMs == nil
                    {
                        result.audioRoundTripMs = rtt
                    }
                } catch {
                    // A limit the call broke meanwhile is the better explanation.
                    try checkLimits(test, collector.events, room: result.roomId)
                    throw error
                }
                try checkLimits(test, collector.events, room: result.roomId)
                progress(
                    "    step \(i + 1)/\(test.steps.count) \(step) ok"
                        + String(format: " (%.1f s)", Date().timeIntervalSince(start)))
            }
            result.passed = true
        } catch let f as StepFailure {
            result.failedStep = stepIndex
            result.failure = f.message
        } catch {
            result.failedStep = stepIndex
            result.failure = "\(error)"
        }
        if !audio.isEmpty { result.audio = audio }
        // Whatever the steps did, the call ends before the next one.
        if session.endedEvent == nil {
            try? session.close()
            _ = session.waitForEnd(timeout: 10)
        }
        sampler.stop()
        result.timeline = sampler.points
        if let room = result.roomId { result.sip = trace(of: room) }
        if let directory = evidenceDirectory, let room = result.roomId {
            do {
                let saved = Evidence.save(
                    pcap: try connection.capture(roomId: room), trace: result.sip, directory: directory,
                    test: test.name, iteration: iteration)
                result.evidence = saved.evidence
                if let problem = saved.problem { progress("    \(problem)") }
            } catch {
                progress("    no capture from the gateway: \(error)")
            }
        }
        measure(&result, collector.events, start: start, session: session)
        result.durationSec = (Date().timeIntervalSince(start) * 10).rounded() / 10
        return result
    }

    /// The call's SIP trace once its last request has its answer (a BYE's 200 can follow
    /// the end event), or as it is after 2 s.
    func trace(of room: String) -> SIPTraceDocument? {
        var doc: SIPTraceDocument?
        _ = wait(2) {
            doc = try? connection.sipTrace(roomId: room)
            guard let last = doc?.messages.last?.firstLine else { return false }
            return !(last.hasPrefix("BYE ") || last.hasPrefix("CANCEL "))
        }
        return doc
    }

    /// Polls `condition` every `every` seconds until it holds or `seconds` pass.
    func wait(_ seconds: Double, every: Double = 0.02, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(UInt32(every * 1_000_000))
        }
        return condition()
    }

    /// "Initializing, Connecting (180), Disconnected (486 Busy Here, cause 17)": what happened so far.
    private func happened(_ events: [SessionEvent]) -> String {
        let s = events.compactMap { e -> String? in
            switch e.event {
            case .onSessionSIPStatus:
                let sip =
                    e.sip.map {
                        " (\($0.code)\($0.reason.isEmpty ? "" : " " + $0.reason)\($0.cause.map { ", cause \($0)" } ?? ""))"
                    } ?? ""
                return (e.status?.rawValue ?? "?") + (e.earlyMedia == true ? " with early media" : "") + sip
            case .onSessionEnded: return "ended \(e.reason?.rawValue ?? "?")"
            case .onSessionTransfer: return "transfer \(e.transfer?.state.rawValue ?? "?")"
            case .onSessionError: return "error \(e.code ?? 0)"
            default: return nil
            }
        }
        return s.isEmpty ? "no events" : s.joined(separator: ", ")
    }

    /// The call's start as its events count it (the first event), ms since 1970.
    private func startMs(_ events: [SessionEvent]) -> Int64? { events.first?.at }

    /// `maxPostDialDelayMs` and `maxAnswerMs`, once the first 18x (or the answer) and the
    /// answer have arrived.
    private func checkLimits(_ test: TestCase, _ events: [SessionEvent], room: String?) throws {
        guard let t0 = startMs(events) else { return }
        if let limit = test.maxPostDialDelayMs,
            let first = events.first(where: { $0.status == .connecting || $0.status == .connected }),
            Double(first.at - t0) > limit
        {
            let what = first.status == .connecting ? "18x" : "18x or answer"
            throw StepFailure(
                message: String(
                    format: "post-dial delay %.1f s over the %.1f s limit (%@)",
                    Double(first.at - t0) / 1000, limit / 1000, trying(room, limit: limit / 1000, what)))
        }
        if let limit = test.maxAnswerMs, let answer = events.first(where: { $0.status == .connected }),
            Double(answer.at - t0) > limit
        {
            throw StepFailure(
                message: String(
                    format: "answer after %.1f s over the %.1f s limit", Double(answer.at - t0) / 1000, limit / 1000))
        }
    }

    /// What the carrier said within the post-dial limit, from the gateway's SIP trace:
    /// "no 100 Trying or 18x within it; its 100 Trying came after 4.0 s", or "100 Trying
    /// after 0.1 s, no 18x within it". Without a trace it names the 18x only.
    private func trying(_ room: String?, limit: Double, _ what: String) -> String {
        guard let room, let trace = try? connection.sipTrace(roomId: room),
            let invite = trace.messages.first(where: { $0.direction == "sent" && $0.firstLine.hasPrefix("INVITE ") })
        else {
            return "no \(what) within it"
        }
        let resent = trace.messages.filter {
            $0.direction == "sent" && $0.retransmission && $0.firstLine.hasPrefix("INVITE ")
        }.count
        let trying = trace.messages.first { $0.direction == "received" && $0.firstLine.hasPrefix("SIP/2.0 100") }
        let after = trying.map { $0.time - invite.time }
        var note: String
        if let after, after <= limit {
            note = String(format: "100 Trying after %.1f s, no %@ within it", after, what)
        } else {
            note =
                "no 100 Trying or \(what) within it"
                + (after.map { String(format: "; its 100 Trying came after %.1f s", $0) } ?? "")
        }
        if resent > 0 { note += "; our INVITE was sent again \(resent) time\(resent == 1 ? "" : "s")" }
        return note
    }

    /// Why the client's tone did not come back: the carrier sends another payload type than
    /// its answer chose (the gateway's trunk counters), sends audio but not our echo, or
    /// sends nothing.
    private func echoFailure(hz: Double, within: Double, packets: Int, room: String?) -> String {
        if let room, let snap = try? connection.snapshot(roomId: room), let trunk = snap.trunk,
            let other = trunk.otherPayloadType, (trunk.otherPayloadTypes ?? 0) > 0
        {
            let chose = [snap.codec, trunk.payloadType.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ")
            return
                "the carrier sends RTP payload type \(other) but its answer chose \(chose.isEmpty ? "another" : chose)"
                + " (\(trunk.otherPayloadTypes ?? 0) packets dropped)"
        }
        if packets > 0 {
            return String(
                format:
                    "one-way audio: audio arrives from the carrier (%d packets) but our %.0f Hz tone does not come back within \(within) s",
                packets, hz)
        }
        return String(format: "no audio from the carrier (expected our %.0f Hz tone back within \(within) s)", hz)
    }

    /// The Connected event, if the call was answered.
    private func answered(_ events: [SessionEvent]) -> SessionEvent? { events.first { $0.status == .connected } }

    private func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Performs one step; returns the audio round trip (ms) when the step measured one.
    private func perform(
        _ step: TestStep, number: Int, session: IrisRtcAudioSession, events: Collector, cursor: inout Int,
        transferCursor: inout Int, audio: inout [AudioCheck], room: String?
    ) throws -> Int? {
        let leg = session.stream.leg
        switch step {
        case .expectStatus(let status, let early, let within):
            let from = cursor
            let match = { () -> Int? in
                let list = events.events
                return list.indices.first {
                    $0 >= from && list[$0].status == status && (early == nil || list[$0].earlyMedia == early)
                }
            }
            guard wait(within, { match() != nil }), let at = match() else {
                let list = events.events
                // Endless early media: a 183 with audio, and no answer.
                if status == .connected, answered(list) == nil, session.endedEvent == nil, leg.receivedPackets() > 0,
                    let early = list.first(where: { $0.event == .onSessionEarlyMedia || $0.earlyMedia == true })
                {
                    throw StepFailure(
                        message: String(
                            format:
                                "early media for %.1f s and no answer (%d packets; expected Connected within \(within) s)",
                            Double(nowMs() - early.at) / 1000, leg.receivedPackets()))
                }
                throw StepFailure(
                    message:
                        "expected \(status.rawValue)\(early == true ? " with early media" : "") within \(within) s; got \(happened(list))"
                )
            }
            cursor = at + 1
        case .expectEarlyMedia(let within):
            guard
                wait(
                    within,
                    { events.events.contains { $0.event == .onSessionEarlyMedia } && leg.receivedPackets() > 10 })
            else {
                throw StepFailure(
                    message:
                        "expected early media (183 with SDP and audio) within \(within) s; got \(happened(events.events)), \(leg.receivedPackets()) packets"
                )
            }
            if events.events.contains(where: { $0.status == .connected }) {
                throw StepFailure(message: "expected audio before the answer; the call was already connected")
            }
        case .wait(let s):
            usleep(UInt32(s * 1_000_000))
        case .sendDTMF(let digits):
            do { try session.insertDTMFtone(digits) } catch {
                throw StepFailure(message: "DTMF \(digits) refused: \(error)")
            }
        case .expectDTMF(let digits, let within):
            let got = { events.events.filter { $0.event == .onSessionDTMF }.compactMap(\.digit).joined() }
            guard wait(within, { got().contains(digits) }) else {
                throw StepFailure(message: "expected DTMF \(digits) within \(within) s; got \"\(got())\"")
            }
        case .expectEcho(let hz, let within):
            guard wait(within, { leg.toneLevel(hz: hz, lastSeconds: 0.4) > 0.3 }) else {
                throw StepFailure(
                    message: echoFailure(hz: hz, within: within, packets: leg.receivedPackets(), room: room)
                        + String(format: "; its level was %.2f of the audio", leg.toneLevel(hz: hz, lastSeconds: 0.4)))
            }
            // Round trip: silence until the echo of the tone is gone, then the tone's onset
            // against the moment it comes back.
            let source = leg.source
            leg.source = .silence
            _ = wait(2) { leg.toneLevel(hz: hz, lastSeconds: 0.1) < 0.05 }
            let onset = Date()
            leg.source = .tone(hz: hz, amplitude: 0.3)
            defer { leg.source = source }
            guard wait(2, { leg.toneLevel(hz: hz, lastSeconds: 0.06) > 0.3 }) else { return nil }
            return Int(Date().timeIntervalSince(onset) * 1000)
        case .expectAudio(let within):
            let before = leg.receivedPackets()
            guard wait(within, { leg.receivedPackets() >= before + 25 }) else {
                let came = leg.receivedPackets() - before
                if came == 0, let answer = answered(events.events), session.endedEvent == nil {
                    throw StepFailure(
                        message: String(
                            format: "late media: no audio from the carrier %.1f s after the answer",
                            Double(nowMs() - answer.at) / 1000))
                }
                throw StepFailure(message: "expected audio from the carrier within \(within) s; \(came) packets came")
            }
        case .hold(let within), .unhold(let within):
            let hold = { if case .hold = step { true } else { false } }()
            let target: SessionStatus = hold ? .hold : .connected
            let seen = events.events.filter { $0.status == target }.count
            do { try hold ? session.hold() : session.unhold() } catch {
                throw StepFailure(message: "\(hold ? "hold" : "unhold") refused: \(error)")
            }
            guard wait(within, { events.events.filter { $0.status == target }.count > seen }) else {
                throw StepFailure(
                    message:
                        "expected \(target.rawValue) within \(within) s after \(hold ? "hold" : "unhold"); got \(happened(events.events))"
                )
            }
        case .hangup:
            do { try session.close() } catch { throw StepFailure(message: "hang-up refused: \(error)") }
        case .expectEnd(let reason, let code, let cause, let causeFits, let within):
            guard wait(within, { session.endedEvent != nil }), let end = session.endedEvent else {
                throw StepFailure(
                    message:
                        "expected the call to end \(reason.rawValue) within \(within) s; got \(happened(events.events))"
                )
            }
            let sip = end.sip.map { "\($0.code)\($0.cause.map { " cause \($0)" } ?? "")" } ?? "no SIP code"
            guard end.reason == reason, code == nil || end.sip?.code == code, cause == nil || end.sip?.cause == cause
            else {
                let want = "\(reason.rawValue)" + (code.map { " \($0)" } ?? "") + (cause.map { " cause \($0)" } ?? "")
                throw StepFailure(message: "expected the end \(want); got \(end.reason?.rawValue ?? "?") (\(sip))")
            }
            if causeFits, let details = end.sip, let got = details.cause, !Q850.fits(cause: got, sipCode: details.code)
            {
                let expected = (Q850.expected(sipCode: details.code) ?? []).map(String.init).joined(separator: ", ")
                throw StepFailure(
                    message:
                        "Q.850 cause \(got) contradicts \(details.code)\(details.reason.isEmpty ? "" : " " + details.reason)"
                        + " (expected one of \(expected))")
            }
        case .expectUp(let seconds):
            guard let answer = answered(events.events), session.endedEvent == nil else {
                throw StepFailure(
                    message:
                        "expected the call up for \(seconds) s; it is not connected (got \(happened(events.events)))")
            }
            if wait(seconds, { session.endedEvent != nil }), let end = session.endedEvent {
                let how =
                    end.sip.map { d -> String in
                        let kind =
                            d.code == 200 || d.code == 0 ? "BYE" : "\(d.code)\(d.reason.isEmpty ? "" : " " + d.reason)"
                        return kind + (d.cause.map { ", cause \($0)" } ?? "")
                    } ?? "no SIP details"
                // A 200 OK the carrier kept sending says our ACK never reached it (RFC 3261
                // §13.3.1.4: it gives up after 64*T1 and sends BYE): the trace shows it.
                let resent =
                    room.flatMap { try? connection.sipTrace(roomId: $0) }.map { trace in
                        trace.messages.filter {
                            $0.direction == "received" && $0.retransmission && $0.firstLine.hasPrefix("SIP/2.0 200")
                                && $0.text.range(
                                    of: #"\nCSeq:\s*\d+\s+INVITE"#, options: [.regularExpression, .caseInsensitive])
                                    != nil
                        }.count
                    } ?? 0
                let retransmissions =
                    resent > 0
                    ? "; it retransmitted its 200 OK \(resent) time\(resent == 1 ? "" : "s") after our ACK: the ACK never reached it"
                    : ""
                throw StepFailure(
                    message: String(
                        format: "the carrier ended the call %.1f s after the answer (%@) before the test did",
                        Double(end.at - answer.at) / 1000, how) + retransmissions)
            }
        case .audioQuality(let q):
            let codec = events.events.first { $0.event == .onStreamQualityIndicator }?.codec
            let (check, failure) = measureAudio(q, step: number, leg: leg, roomId: session.roomId, codec: codec)
            audio.append(check)
            if let failure { throw StepFailure(message: failure) }
        case .transfer(let target):
            do { try session.transfer(to: target) } catch {
                throw StepFailure(message: "transfer to \(target) refused: \(error)")
            }
        case .expectTransfer(let state, let code, let within):
            var match = TransferMatch.pending
            _ = wait(within) {
                match = Self.transferMatch(state, sipCode: code, in: events.events, from: transferCursor)
                return match != .pending
            }
            switch match {
            case .matched(let at): transferCursor = at + 1
            case .failed(let message): throw StepFailure(message: message)
            case .pending:
                throw StepFailure(
                    message: Self.transferTimedOut(
                        state, sipCode: code, within: within, events: events.events, from: transferCursor))
            }
        case .expectAMD(let a): try expectAMD(a, events: events)
        case .stream(let s): try stream(s, session: session)
        case .expectRecording(let r): try expectRecording(r, room: room)
        }
        return nil
    }

    private func measure(_ r: inout TestCallResult, _ events: [SessionEvent], start: Date, session: IrisRtcAudioSession)
    {
        r.events = events
        let t0 = events.first?.at ?? Int64(start.timeIntervalSince1970 * 1000)
        if let ringing = events.first(where: { $0.status == .connecting }) { r.postDialDelayMs = Int(ringing.at - t0) }
        if let answer = events.first(where: { $0.status == .connected }) { r.answerMs = Int(answer.at - t0) }
        if let end = events.first(where: { $0.event == .onSessionEnded }) {
            r.endReason = end.reason?.rawValue
            r.sipCode = end.sip?.code
            r.q850Cause = end.sip?.cause
        }
        r.codec = events.first { $0.event == .onStreamQualityIndicator }?.codec
        if r.answerMs != nil { r.sdpSane = r.codec != nil }
        if let cause = r.q850Cause, let code = r.sipCode { r.causeConsistent = Q850.fits(cause: cause, sipCode: code) }
        if let room = r.roomId, let snap = try? connection.snapshot(roomId: room), let trunk = snap.trunk,
            trunk.packetsReceived > 0
        {
            r.packetsLost = trunk.packetsLost
            r.jitterMs = (trunk.jitterMs * 100).rounded() / 100
            r.roundTripMs = trunk.roundTripMs
            let expected = Double(trunk.packetsReceived) + Double(max(0, trunk.packetsLost))
            r.mos = EModel.mos(
                codec: r.codec ?? "PCMU",
                lossPercent: expected > 0 ? 100 * Double(max(0, trunk.packetsLost)) / expected : 0,
                oneWayDelayMs: (trunk.roundTripMs ?? 0) / 2 + trunk.jitterMs * 2 + 40)
        }
    }
}

/// Whether a Q.850 cause fits the SIP code it came with (RFC 3398 §7.2.4.1 and RFC 4497's
/// mapping, with the usual alternatives): a carrier that says 486 with cause 1 is confused.
public enum Q850 {
    static let bySIP: [Int: Set<Int>] = [
        200: [16, 31],  // BYE: normal clearing
        404: [1, 2, 3, 20, 22, 26], 484: [28], 604: [1],
        486: [17], 600: [17],
        480: [18, 19, 20, 31], 408: [18, 102],
        603: [21], 403: [21, 55, 57, 87],
        503: [27, 34, 38, 41, 42, 44, 47, 63], 502: [27, 38], 500: [41, 111, 127],
        488: [58, 65, 79, 88], 487: [16, 31], 504: [102]
    ]

    /// The causes that fit `sipCode`, ascending; nil when the code has no mapping.
    public static func expected(sipCode: Int) -> [Int]? { bySIP[sipCode].map { $0.sorted() } }

    public static func fits(cause: Int, sipCode: Int) -> Bool {
        guard let allowed = bySIP[sipCode] else { return true }  // no mapping: nothing to contradict
        return allowed.contains(cause)
    }
}

/// Samples a call's audio every 250 ms on a thread of its own (the timeline of the report).
final class Sampler: Sendable {
    private let leg: ClientMediaLeg
    private let toneHz: Double
    private let connection: IrisRtcConnection
    private let start: Date
    private let list = Mutex<[TimelinePoint]>([])
    private let done = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    init(leg: ClientMediaLeg, toneHz: Double, connection: IrisRtcConnection, start: Date) {
        self.leg = leg
        self.toneHz = toneHz
        self.connection = connection
        self.start = start
    }

    var points: [TimelinePoint] { list.withLock { $0 } }

    func run(room: @escaping @Sendable () -> String?) {
        started.store(true, ordering: .relaxed)
        Thread { [self] in
            var lastPackets = 0, tick = 0
            var jitter: Double?
            while !done.load(ordering: .relaxed) && list.withLock({ $0.count }) < 2400 {
                usleep(250_000)
                tick += 1
                // The trunk's jitter once a second (an API round trip).
                if tick % 4 == 0, let r = room(), let snap = try? connection.snapshot(roomId: r) {
                    jitter = snap.trunk?.jitterMs
                }
                let packets = leg.receivedPackets()
                let p = TimelinePoint(
                    ms: Int(Date().timeIntervalSince(start) * 1000), packets: packets - lastPackets,
                    echoLevel: (leg.toneLevel(hz: toneHz, lastSeconds: 0.25) * 100).rounded() / 100, jitterMs: jitter)
                lastPackets = packets
                list.withLock { $0.append(p) }
            }
            finished.signal()
        }.start()
    }

    func stop() {
        guard started.load(ordering: .relaxed), !done.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }
}

/// The E-model (ITU-T G.107) reduced to what a test call measures: codec impairment and its
/// loss robustness (G.113), packet loss, and one-way delay; everything else at defaults.
public enum EModel {
    public static func mos(codec: String, lossPercent: Double, oneWayDelayMs: Double) -> Double {
        // Ie and Bpl with packet loss concealment (G.113 Appendix I).
        let (ie, bpl): (Double, Double) =
            switch codec.uppercased() {
            case "G722": (0, 25.1)  // wideband scored on the narrowband scale, conservatively
            default: (0, 25.1)  // G.711 with PLC
            }
        let ieEff = ie + (95 - ie) * lossPercent / (lossPercent + bpl)
        let d = oneWayDelayMs
        let id = 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0)
        let r = max(0, min(100, 93.2 - id - ieEff))
        let mos = 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6
        return (mos * 100).rounded() / 100
    }
}
