import IrisAPI

/// What a session reports, in the Iris SDK's words. Called on the session's event thread,
/// in `seq` order. Every method has an empty default.
public protocol IrisRtcAudioSessionDelegate: AnyObject, Sendable {
    func onSessionCreated(_ session: IrisRtcAudioSession, roomId: String, direction: String)
    func onSessionSIPStatus(_ session: IrisRtcAudioSession, status: SessionStatus, earlyMedia: Bool, sip: SIPDetails?)
    func onSessionEarlyMedia(_ session: IrisRtcAudioSession)
    func onStreamQualityIndicator(_ session: IrisRtcAudioSession, quality: String, codec: String)
    func onSessionMerged(_ session: IrisRtcAudioSession, heldRoomId: String)
    func onSessionDTMF(_ session: IrisRtcAudioSession, digit: String, durationMs: Int)
    func onSessionError(_ session: IrisRtcAudioSession, code: Int, message: String, sip: SIPDetails?)
    func onSessionEnded(_ session: IrisRtcAudioSession, reason: EndReason, sip: SIPDetails?, durationSec: Double)
    /// A transfer's progress, ours or the carrier's: `sip` is the SIP code that moved it
    /// (a NOTIFY's sipfrag, a REFER's refusal).
    func onSessionTransfer(_ session: IrisRtcAudioSession, transfer: TransferInfo, sip: SIPDetails?, message: String?)
    /// The carrier asks to transfer the call: answer with `acceptTransfer` or `declineTransfer`.
    func onSessionTransferRequest(_ session: IrisRtcAudioSession, transfer: TransferInfo)
    /// Answering-machine detection's verdict (`amd` on createWithTN).
    func onSessionAMD(_ session: IrisRtcAudioSession, amd: AMDInfo)
    /// The machine's greeting tone ended (leave the message now), or none came.
    func onSessionBeep(_ session: IrisRtcAudioSession, beep: BeepInfo)
    /// A media stream (the agent's leg or a fork) started or ended.
    func onSessionStream(_ session: IrisRtcAudioSession, stream: StreamInfo)
    /// The recording started, paused, resumed, stopped or failed.
    func onSessionRecording(_ session: IrisRtcAudioSession, recording: RecordingInfo)
    /// Every event as it came, before the specific method (logging, `--json`).
    func onEvent(_ session: IrisRtcAudioSession, event: SessionEvent)
}

extension IrisRtcAudioSessionDelegate {
    public func onSessionCreated(_ session: IrisRtcAudioSession, roomId: String, direction: String) {}
    public func onSessionSIPStatus(
        _ session: IrisRtcAudioSession, status: SessionStatus, earlyMedia: Bool, sip: SIPDetails?
    ) {}
    public func onSessionEarlyMedia(_ session: IrisRtcAudioSession) {}
    public func onStreamQualityIndicator(_ session: IrisRtcAudioSession, quality: String, codec: String) {}
    public func onSessionMerged(_ session: IrisRtcAudioSession, heldRoomId: String) {}
    public func onSessionDTMF(_ session: IrisRtcAudioSession, digit: String, durationMs: Int) {}
    public func onSessionError(_ session: IrisRtcAudioSession, code: Int, message: String, sip: SIPDetails?) {}
    public func onSessionEnded(_ session: IrisRtcAudioSession, reason: EndReason, sip: SIPDetails?, durationSec: Double)
    {}
    public func onSessionTransfer(
        _ session: IrisRtcAudioSession, transfer: TransferInfo, sip: SIPDetails?, message: String?
    ) {}
    public func onSessionTransferRequest(_ session: IrisRtcAudioSession, transfer: TransferInfo) {}
    public func onSessionAMD(_ session: IrisRtcAudioSession, amd: AMDInfo) {}
    public func onSessionBeep(_ session: IrisRtcAudioSession, beep: BeepInfo) {}
    public func onSessionStream(_ session: IrisRtcAudioSession, stream: StreamInfo) {}
    public func onSessionRecording(_ session: IrisRtcAudioSession, recording: RecordingInfo) {}
    public func onEvent(_ session: IrisRtcAudioSession, event: SessionEvent) {}
}
