import Crypto
import Dispatch
import Foundation
import IOCore
import IrisAPI
import Media
import MediaStreams
import Synchronization

/// A session's media services (SessionServices.swift): what starts them, what the app asks of
/// them, what they report, and their end with the call. On the SIP loop throughout; the media
/// thread only ever sees their sinks.
extension GatewaySession {
    /// At creation (or join): the agent's stream opens now, so the agent is there when the
    /// call is; recording and detection wait for the answer.
    func startServices(_ request: ServiceRequest, agent: AgentStreamRequest?) {
        services.pending = request
        if let agent {
            openStream(
                kind: .agent, configuration: agent.configuration, tracks: .inbound,
                customParameters: agent.customParameters, hangupOnClose: agent.hangupOnClose)
        }
    }

    /// A status event went out: the first `Connected` (the answer) starts the recording and
    /// the detector; later ones (hold, unhold) are news for the SIPREC metadata.
    func servicesStatusChanged(_ status: SessionStatus) {
        if services.connected, status == .hold || status == .connected { return siprecPartiesChanged() }
        if status == .connected { servicesConnected() }
    }

    /// The call was answered (the first `Connected`): the recording and the detector start.
    func servicesConnected() {
        guard !services.connected else { return }
        services.connected = true
        if let recording = services.pending.recording { try? startRecording(recording) }
        if let settings = services.pending.amd, machine.direction == .outbound, let media {
            let me = LoopBound(self, loop: loop)
            let tap = AMDTap(settings: settings) { [loop] event in loop.execute { me.value.amdEvent(event) } }
            services.amd = tap
            media.addAudioSink(tap)
        }
    }

    /// The call is ending: streams stop, the recording is completed into the record.
    func stopServices() {
        if let amd = services.amd { media?.removeAudioSink(amd) }
        services.amd = nil
        for stream in services.streams.values { stream.bridge.connection.stop() }
        services.streams = [:]
        if let recording = services.recording { finishRecording(recording, publish: false) }
        services.recording = nil
        stopSIPREC()
        let count = services.streamsStarted, amd = services.amdResult
        if count > 0 || amd != nil {
            gateway.records.update(roomId: roomId) { r in
                if count > 0 { r.streams = count }
                if let amd {
                    r.amdResult = amd.result
                    r.amdMs = amd.ms
                }
            }
        }
    }

    /// Publishes a media service's event while the session lives (after its end: nothing).
    func publishService(_ name: SessionEvent.Name, _ fill: (inout SessionEvent) -> Void) {
        guard !machine.isEnded else { return }
        var e = SessionEvent(event: name, roomId: roomId, traceId: traceId)
        fill(&e)
        gateway.events.publish(e)
    }

    // MARK: Answering-machine detection

    private func amdEvent(_ event: AMDEvent) {
        switch event {
        case .verdict(let result):
            let info = AMDInfo(result: result.verdict.rawValue, ms: result.milliseconds, cause: result.cause.rawValue)
            services.amdResult = info
            gateway.metrics.amd(result.verdict.rawValue)
            publishService(.onSessionAMD) { $0.amd = info }
        case .beep(let endedAt, _, _):
            publishService(.onSessionBeep) { $0.beep = BeepInfo(result: "beep", ms: endedAt) }
        case .noBeep(let at):
            publishService(.onSessionBeep) { $0.beep = BeepInfo(result: "noBeep", ms: at) }
        }
    }

    // MARK: Recording

    /// Opens the file off the loop (a slow disk must not hold SIP), then taps the call.
    func startRecording(_ configuration: CallRecordingConfiguration) throws(GatewayError) {
        guard services.recording == nil, !services.recordingStarting else {
            throw .wrongState("session \(roomId) is being recorded already")
        }
        guard let media, !machine.isEnded else { throw .wrongState("session \(roomId) has no media to record") }
        services.recordingStarting = true
        startSIPREC()
        let directory = gateway.configuration.recordingsDirectory
        let path = directory + "/" + roomId + "." + (configuration.format == .wav ? "wav" : "ogg")
        let me = LoopBound(self, loop: loop)
        DispatchQueue.global().async { [loop] in
            let result: Result<CallRecordingWriter, any Error>
            do {
                try PrivateFiles.prepareDirectory(directory)
                result = .success(try CallRecordingWriter(path: path, configuration: configuration))
            } catch {
                result = .failure(error)
            }
            loop.execute {
                let s = me.value
                s.services.recordingStarting = false
                switch result {
                case .failure(let error):
                    s.publishService(.onSessionRecording) {
                        $0.recording = SessionRecording.info(configuration, "failed", reason: "\(error)")
                    }
                case .success(let writer):
                    let recording = SessionRecording(sink: RecordingTap(writer: writer))
                    guard !s.machine.isEnded else { return s.finishRecording(recording, publish: false) }
                    s.services.recording = recording
                    s.gateway.metrics.recordingStarted()
                    media.addAudioSink(recording.sink)
                    s.gateway.records.update(roomId: s.roomId) { $0.recordingPath = path }
                    s.publishService(.onSessionRecording) { $0.recording = recording.info("recording") }
                }
            }
        }
    }

    /// `POST .../recording`.
    func recordingAction(_ request: RecordingRequest) throws(GatewayError) {
        if request.action == "start" {
            return try startRecording(
                Gateway.recordingConfiguration(
                    RecordingOptions(channels: request.channels, format: request.format), profile: profile, field: ""))
        }
        guard ["pause", "resume", "stop"].contains(request.action) else {
            throw .badRequest("action must be start, pause, resume or stop, found \"\(request.action)\"")
        }
        guard let recording = services.recording else {
            throw .wrongState(
                services.recordingStarting
                    ? "session \(roomId)'s recording is starting" : "session \(roomId) is not being recorded")
        }
        switch request.action {
        case "pause":
            guard !recording.paused else { return }
            recording.paused = true
            recording.writer.pause()
            siprecPaused(true)
            publishService(.onSessionRecording) { $0.recording = recording.info("paused") }
        case "resume":
            guard recording.paused else { return }
            recording.paused = false
            recording.writer.resume()
            siprecPaused(false)
            publishService(.onSessionRecording) { $0.recording = recording.info("recording") }
        default:
            services.recording = nil
            stopSIPREC()
            finishRecording(recording, publish: true)
        }
    }

    /// Untaps the call and completes the file on the writer's thread; the summary goes to the
    /// record (and, while the session lives, to the app).
    private func finishRecording(_ recording: SessionRecording, publish: Bool) {
        media?.removeAudioSink(recording.sink)
        let me = LoopBound(self, loop: loop), records = gateway.records, room = roomId
        let configuration = recording.configuration, gateway = self.gateway
        gateway.recordingsFinishing.add(1, ordering: .relaxed)
        recording.writer.finish { [loop] outcome in
            defer { gateway.recordingsFinishing.subtract(1, ordering: .releasing) }
            if case .success(let summary) = outcome {
                let paused = summary.pausedIntervals.map { String(format: "%.2f-%.2f", $0.start, $0.end) }
                records.update(roomId: room) { r in
                    r.recordingPath = summary.path
                    r.recordingDurationSec = (summary.duration * 100).rounded() / 100
                    r.recordingPaused = paused.isEmpty ? nil : paused.joined(separator: ",")
                }
            }
            guard publish else { return }
            loop.execute {
                let info: RecordingInfo
                switch outcome {
                case .success(let summary): info = SessionRecording.info(configuration, "stopped", summary: summary)
                case .failure(let error): info = SessionRecording.info(configuration, "failed", reason: "\(error)")
                }
                me.value.publishService(.onSessionRecording) { $0.recording = info }
            }
        }
    }

    // MARK: Streams

    /// `POST .../streams`: a fork of the call's audio.
    func startFork(_ request: StreamRequest) throws(GatewayError) -> StreamInfo {
        guard media != nil, !machine.isEnded else { throw .wrongState("session \(roomId) has no media to stream") }
        let tracks: MediaStreamTracks
        switch request.track {
        case nil: tracks = .inbound
        case let t?:
            guard let parsed = MediaStreamTracks(rawValue: t) else {
                throw .badRequest("track must be inbound, outbound or both, found \"\(t)\"")
            }
            tracks = parsed
        }
        let limit = gateway.configuration.mediaStreams.maxForksPerSession
        guard services.streams.values.filter({ $0.kind == .fork }).count < limit else {
            throw .wrongState(
                "session \(roomId) has \(limit) streams, the most one session may hold (mediaStreams.maxForksPerSession)"
            )
        }
        let configuration = try gateway.streamConfiguration(
            url: request.url, headers: request.headers, encoding: request.encoding, field: "")
        let stream = openStream(
            kind: .fork, configuration: configuration, tracks: tracks,
            customParameters: request.customParameters ?? [:], hangupOnClose: request.hangupOnClose ?? false)
        return stream.info("starting")
    }

    /// `DELETE .../streams/{streamId}`.
    func stopFork(_ id: String) throws(GatewayError) {
        guard let stream = services.streams[id], stream.kind == .fork else {
            throw GatewayError(IrisCode.incorrectParams, .notFound, "session \(roomId) has no stream \(id)")
        }
        stream.bridge.connection.stop()
    }

    @discardableResult
    private func openStream(
        kind: SessionStream.Kind, configuration: MediaStreamConfiguration, tracks: MediaStreamTracks,
        customParameters: [String: String], hangupOnClose: Bool
    ) -> SessionStream {
        let id = "MZ" + Crypto.hex(Crypto.randomBytes(count: 16))
        let me = LoopBound(self, loop: loop)
        let bridgeBox = Mutex<MediaStreamBridge?>(nil)
        let connection = MediaStreamConnection(configuration) { [loop] event in
            switch event {
            case .audio, .mark, .clear:
                // The player takes these on the client loop; the media thread plays them. A
                // fork is one-way: what its consumer sends is not played.
                if kind == .agent { bridgeBox.withLock { $0 }?.handle(event) }
            default:
                loop.execute { me.value.streamEvent(id, event) }
            }
        }
        let bridge = MediaStreamBridge(connection: connection, tracks: tracks)
        bridgeBox.withLock { $0 = bridge }
        let stream = SessionStream(id: id, kind: kind, bridge: bridge, hangupOnClose: hangupOnClose)
        services.streams[id] = stream
        services.streamsStarted += 1
        gateway.metrics.streamOpened(kind.rawValue)
        if kind == .agent { media?.setAudioSource(bridge) }
        media?.addAudioSink(bridge)
        connection.start(
            streamSid: id, accountSid: routingId ?? "irisgw", callSid: roomId, tracks: tracks.tracks,
            customParameters: customParameters)
        return stream
    }

    private func streamEvent(_ id: String, _ event: MediaStreamEvent) {
        guard let stream = services.streams[id] else { return }
        switch event {
        case .opened:
            stream.opened = true
            publishService(.onSessionStream) { $0.stream = stream.info("started") }
        case .refused(let error):
            // The agent's message is ignored and the call goes on; the app hears of the first.
            guard !stream.refusalReported else { return }
            stream.refusalReported = true
            publishService(.onSessionError) {
                $0.code = IrisCode.incorrectParams
                $0.message = "stream \(id): an agent message was refused: \(error)"
            }
        case .ended(let end):
            services.streams[id] = nil
            if stream.kind == .agent { media?.setAudioSource(nil) }
            media?.removeAudioSink(stream.bridge)
            let failed: Bool
            if case .stopped = end { failed = false } else { failed = true }
            publishService(.onSessionStream) {
                $0.stream = stream.info(failed ? "failed" : "stopped", reason: end.description)
            }
            if failed, stream.hangupOnClose, !machine.isEnded {
                handle(
                    .platformMediaFailed(
                        "the \(stream.kind == .agent ? "voice agent's " : "")stream \(id) ended: \(end)"))
            }
        case .audio, .mark, .clear:
            break
        }
    }

    /// A digit the carrier sent goes to every stream (Twilio's `dtmf` message).
    func forwardDTMF(_ digit: String) {
        for stream in services.streams.values { stream.bridge.connection.sendDTMF(digit) }
    }
}

extension Gateway {
    /// The request's media services over the profile's, checked: a bad field is 400 naming it.
    func serviceRequest(
        recording: RecordingOptions?, amd: AMDOptions?, profile: TrunkProfile
    ) throws(GatewayError) -> ServiceRequest {
        var request = ServiceRequest()
        if recording != nil || profile.recording.always {
            request.recording = try Self.recordingConfiguration(
                recording ?? RecordingOptions(), profile: profile, field: "recording.")
        }
        if let amd {
            var settings = profile.amd
            switch amd.mode {
            case "detect": settings.detectBeep = false
            case "detectBeep": settings.detectBeep = true
            default: throw .badRequest("amd.mode must be detect or detectBeep, found \"\(amd.mode)\"")
            }
            request.amd = settings
        }
        return request
    }

    /// A recording's settings: the request's over the profile's.
    static func recordingConfiguration(
        _ options: RecordingOptions, profile: TrunkProfile, field: String
    ) throws(GatewayError) -> CallRecordingConfiguration {
        let channels = options.channels ?? profile.recording.channels
        guard channels == 1 || channels == 2 else {
            throw .badRequest("\(field)channels must be 1 or 2, found \(channels)")
        }
        var format = profile.recording.format
        if let f = options.format {
            guard let parsed = CallRecordingConfiguration.Format(rawValue: f) else {
                throw .badRequest("\(field)format must be wav or ogg, found \"\(f)\"")
            }
            format = parsed
        }
        let wideband = [.g722, .opus].contains(profile.media.codecs.first)
        return CallRecordingConfiguration(
            format: format, layout: channels == 2 ? .stereo : .mixed, sampleRate: wideband ? 16_000 : 8_000)
    }
}
