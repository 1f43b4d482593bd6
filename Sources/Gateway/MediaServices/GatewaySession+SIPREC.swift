import IOCore
import IrisAPI
import Media
import SIP

/// The copy of a recorded call to the profile's SIPREC recording server (`recording.siprec`,
/// RFC 7866): started with the recording, told of holds and transfers, paused with it (no
/// RTP while paused: what is paused must not reach any recorder), stopped with it.
extension GatewaySession {
    /// Starts the SIPREC session if the profile names a recording server.
    func startSIPREC() {
        guard services.siprec == nil, let srs = profile.recording.siprec, let uri = try? SIPURI.parse(srs),
            let media
        else { return }
        let me = LoopBound(self, loop: loop)
        do {
            let recorder = try SIPRECRecorder(
                ua: gateway.ua, settings: SIPRECSettings(srs: uri), sipSessionID: call?.callID ?? roomId,
                participants: siprecParticipants()
            ) { event in me.value.siprecEvent(event) }
            services.siprec = recorder
            media.addAudioSink(recorder)
            recorder.start()
        } catch {
            publishRecording {
                $0.siprec = "ended"; $0.siprecReason = "the RTP sockets could not be opened: \(error)"
            }
        }
    }

    /// Who is in the call as the metadata says it: the carrier's party and the app's, as
    /// `tel:` URIs of their numbers; on hold neither is heard nor hears.
    func siprecParticipants() -> [SIPRECParticipant] {
        let outbound = machine.direction == .outbound
        let carrierNumber = services.carrierParty ?? (outbound ? targetTN : sourceTN)
        var carrier = SIPRECParticipant.carrier(aor: "tel:" + carrierNumber)
        var app = SIPRECParticipant.application(aor: "tel:" + (outbound ? sourceTN : targetTN), name: routingId)
        if machine.status == .hold {
            carrier.sends = []
            carrier.receives = []
            app.sends = []
            app.receives = []
        }
        return [carrier, app]
    }

    /// The call's parties or hold state changed: the recording server hears of it.
    func siprecPartiesChanged() {
        services.siprec?.update(participants: siprecParticipants())
    }

    /// Pause: no RTP to the recording server; resume: again.
    func siprecPaused(_ paused: Bool) {
        guard let recorder = services.siprec, let media else { return }
        if paused { media.removeAudioSink(recorder) } else { media.addAudioSink(recorder) }
    }

    func stopSIPREC() {
        guard let recorder = services.siprec else { return }
        media?.removeAudioSink(recorder)
        recorder.stop()
    }

    private func siprecEvent(_ event: SIPRECEvent) {
        switch event {
        case .recording:
            publishRecording { $0.siprec = "recording" }
        case .updateRefused:
            break
        case .ended(let reason):
            if let recorder = services.siprec { media?.removeAudioSink(recorder) }
            services.siprec = nil
            services.siprecEnded = reason == .stopped ? "stopped" : reason.description
            gateway.metrics.siprecEnded(reason == .stopped ? "stopped" : "failed")
            publishRecording {
                $0.siprec = "ended"
                if reason != .stopped { $0.siprecReason = reason.description }
            }
        }
    }

    /// An `onSessionRecording` with the local recording's state as it is now.
    private func publishRecording(_ fill: (inout RecordingInfo) -> Void) {
        let configuration = services.recording?.configuration ?? services.pending.recording ?? .init()
        let state = services.recording.map { $0.paused ? "paused" : "recording" } ?? "stopped"
        var info = SessionRecording.info(configuration, state)
        fill(&info)
        publishService(.onSessionRecording) { $0.recording = info }
    }
}
