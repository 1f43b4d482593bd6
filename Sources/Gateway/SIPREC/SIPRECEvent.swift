/// What a `SIPRECRecorder` reports, on the SIP loop. Nothing here ends the recorded call:
/// a recording that fails is reported and the call goes on.
public enum SIPRECEvent: Sendable, Equatable {
    /// The recording server accepted the session (200, ACK sent): `streams` of the two are
    /// being sent (a stream the answer rejected with port 0 is not).
    case recording(streams: Int)
    /// A metadata update (re-INVITE) was refused with `status`; the recording goes on.
    case updateRefused(status: Int)
    /// The recording session is over, and why. Reported once, last.
    case ended(SIPRECEndReason)
}

/// Why a recording session ended, classified where it happened.
public enum SIPRECEndReason: Error, Sendable, Equatable, CustomStringConvertible {
    /// `stop()` ended it (BYE, or CANCEL before the answer).
    case stopped
    /// The recording server refused the INVITE (4xx-6xx).
    case refused(status: Int)
    /// No answer from the recording server in time (`SIPRECSettings.answerTimeout`, Timer B).
    case timeout
    /// The recording server's URI could not be located (DNS) or reached.
    case unreachable(String)
    /// The recording server answered with SDP we cannot use (none, the wrong number of
    /// `m=` lines, no stream to send to); the session was ended with BYE.
    case badAnswer(String)
    /// The recording server sent BYE.
    case remoteHangup
    /// The SIP session failed otherwise (transport error, session timer, lost ACK).
    case failed(String)

    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .refused(let status): "the recording server refused the session with \(status)"
        case .timeout: "no answer from the recording server"
        case .unreachable(let why): "the recording server cannot be reached: \(why)"
        case .badAnswer(let why): "unusable answer from the recording server: \(why)"
        case .remoteHangup: "the recording server ended the session"
        case .failed(let why): "the recording session failed: \(why)"
        }
    }
}
