/// What the simulator does with a call to one of its test numbers.
public enum Behaviour: Sendable, Equatable, CustomStringConvertible {
    /// 180, answers after `answerDelay`, echoes the caller's RTP back.
    case answerEcho
    /// A final failure response with a Q.850 cause in `Reason` (RFC 3326) when given.
    case reject(status: Int, reason: String, q850: Int?, text: String?)
    /// 180 and never answers; a CANCEL gets 200 and the INVITE 487.
    case ringForever
    /// 183 with SDP and an announcement tone as early media for `earlyMediaDuration`, then
    /// 200 and echo.
    case earlyMediaThenAnswer
    /// 183 without SDP (no early media), 200 after `answerDelay`, echo.
    case progressThenAnswer
    /// Answers, puts the caller on hold (re-INVITE `a=sendonly`) after `holdAfter` and
    /// resumes (`a=sendrecv`) after `resumeAfter`; echo throughout.
    case holdAndResume
    /// Answers, sends the RFC 4733 digits `digits`, then echoes as RFC 4733 every digit it
    /// receives.
    case dtmf(digits: String)
    /// Answers and sends BYE with `Reason: Q.850;cause=16` after `hangupAfter`.
    case remoteHangup
    /// 407 with a digest challenge until the INVITE carries valid credentials, then as
    /// `answerEcho`.
    case challenge
    /// Reliable 180 (`Require: 100rel`, RFC 3262) that the caller must PRACK, then answers.
    case reliableRinging
    /// Answers with G.722 when the offer has it (else as `answerEcho`), echo.
    case preferG722
    /// Misbehaves: answers and sends no audio at all (one-way audio, a common trunk fault),
    /// for checking that a suite catches it.
    case silentAnswer
    /// Misbehaves: answers and sends its own known signal (400 Hz + 1020 Hz, each at
    /// -15 dBFS, continuous) and never echoes: audio only from the carrier.
    case oneWay
    /// Misbehaves: answers, but its RTP (echo) starts `lateMediaDelay` after the 200.
    case lateMedia
    /// Misbehaves: 486 Busy Here with `Reason: Q.850;cause=1`, a cause that contradicts the code.
    case wrongCause
    /// Misbehaves: answers choosing PCMU (payload 0) but sends PCMA with payload type 8 (the
    /// echo re-encoded; the other G.711 law when the offer lacked PCMU).
    case codecMismatch
    /// Misbehaves: 183 with SDP and an announcement tone, forever; never answers.
    case endlessEarlyMedia
    /// Misbehaves: answers, ignores our ACK (the 200 is retransmitted on the RFC 3261 timer)
    /// and gives up with BYE, `Reason: Q.850;cause=16` (RFC 3261 §13.3.1.4); echo meanwhile.
    case ignoresACK
    /// Misbehaves: nothing at all (no 100 Trying) for `tryingDelay`, INVITE retransmissions
    /// absorbed; then 100, 180, and 200 after `answerDelay`; echo.
    case slowTrying
    /// Misbehaves: answers and echoes, but drops `lossPercent` of its RTP at random and
    /// delays the rest by up to `jitterMs` (uniform, reordering allowed).
    case lossy
    /// Answers and echoes; a REFER gets 202 and NOTIFYs 100, 180 and the final status of the
    /// Refer-To number's own behaviour (200 when it answers, its rejection, none when it rings
    /// for ever); after a 200 it waits for the transferor's BYE.
    case transferAccept
    /// Answers and echoes; a REFER gets 405 Method Not Allowed (an `Allow` without REFER).
    case transferRefuse405
    /// Answers and echoes; a REFER gets 603 Decline.
    case transferRefuse603
    /// Answers and echoes; a REFER gets 202, NOTIFY 100, then NOTIFY 486 Busy Here
    /// (terminated); the call goes on.
    case transferFailBusy
    /// Answers and echoes; a REFER gets NOTIFY 100 before its 202, 180 twice, 200
    /// (terminated), then one NOTIFY 200 more after the subscription ended.
    case transferOddNotify
    /// Answers and echoes; a REFER gets 202 and never a NOTIFY.
    case transferNoNotify
    /// Answers, and after `referAfter` sends REFER to the gateway (Refer-To +15550100001, or
    /// the INVITE's `X-Sim-Refer-To`); hangs up once a NOTIFY reports a 2xx.
    case refersCaller
    /// Answers, and after `referAfter` calls the gateway again with `Replaces` naming this
    /// call (RFC 3891) and a new echoing media leg; the old call waits for the gateway's BYE.
    case replacesCall
    /// Answers as a person: "Hello?" (espeak-ng) after 300 ms, then silence while listening;
    /// the call stays up until the caller hangs up. For answering-machine detection.
    case answersAsPerson
    /// Answers as a voicemail: a greeting of about 6 s, a 1000 Hz beep of 500 ms, then
    /// silence while it "records".
    case answersAsVoicemail
    /// Answers as a fax: CNG, 1100 Hz for 0.5 s every 3.5 s.
    case answersAsFax

    /// A short name for log lines and docs.
    public var description: String {
        switch self {
        case .answerEcho: "answer-echo"
        case .reject(let status, _, let cause, _): cause.map { "reject-\(status)-cause-\($0)" } ?? "reject-\(status)"
        case .ringForever: "ring-forever"
        case .earlyMediaThenAnswer: "early-media"
        case .progressThenAnswer: "183-no-sdp"
        case .holdAndResume: "hold-resume"
        case .dtmf: "dtmf"
        case .remoteHangup: "remote-bye"
        case .challenge: "auth-407"
        case .reliableRinging: "prack-180"
        case .preferG722: "g722"
        case .silentAnswer: "silent"
        case .oneWay: "one-way"
        case .lateMedia: "late-media"
        case .wrongCause: "wrong-cause"
        case .codecMismatch: "codec-mismatch"
        case .endlessEarlyMedia: "endless-early-media"
        case .ignoresACK: "ignores-ack"
        case .slowTrying: "slow-trying"
        case .lossy: "lossy"
        case .transferAccept: "transfer-accept"
        case .transferRefuse405: "transfer-refuse-405"
        case .transferRefuse603: "transfer-refuse-603"
        case .transferFailBusy: "transfer-fail-486"
        case .transferOddNotify: "transfer-odd-notify"
        case .transferNoNotify: "transfer-no-notify"
        case .refersCaller: "refers-caller"
        case .replacesCall: "replaces-call"
        case .answersAsPerson: "amd-person"
        case .answersAsVoicemail: "amd-voicemail"
        case .answersAsFax: "amd-fax"
        }
    }

    /// Whether the call is meant to be answered (every behaviour but a rejection, endless
    /// ringing or endless early media).
    public var answers: Bool {
        switch self {
        case .reject, .ringForever, .wrongCause, .endlessEarlyMedia: false
        default: true
        }
    }
}

/// The simulator's scripted numbers: the Request-URI user part, E.164 as the gateway dials.
/// Any number not listed gets `defaultBehaviour` (answer and echo), so a quick test call to
/// any number works.
public enum TestNumbers {
    /// Number to behaviour. Data only: the scripts live in `SimCall`.
    public static let table: [String: Behaviour] = [
        "+15550100001": .answerEcho,
        "+15550100002": .reject(status: 486, reason: "Busy Here", q850: 17, text: "User busy"),
        "+15550100003": .ringForever,
        "+15550100004": .earlyMediaThenAnswer,
        "+15550100005": .progressThenAnswer,
        "+15550100006": .reject(status: 603, reason: "Decline", q850: 21, text: "Call rejected"),
        "+15550100007": .reject(status: 404, reason: "Not Found", q850: 1, text: "Unallocated number"),
        "+15550100008": .holdAndResume,
        "+15550100009": .dtmf(digits: "1234#"),
        "+15550100010": .remoteHangup,
        "+15550100011": .reject(status: 503, reason: "Service Unavailable", q850: nil, text: nil),
        "+15550100012": .challenge,
        "+15550100013": .reliableRinging,
        "+15550100014": .preferG722,
        "+15550100015": .silentAnswer,
        "+15550100016": .oneWay,
        "+15550100017": .lateMedia,
        "+15550100018": .wrongCause,
        "+15550100019": .codecMismatch,
        "+15550100020": .endlessEarlyMedia,
        "+15550100021": .ignoresACK,
        "+15550100022": .slowTrying,
        "+15550100023": .lossy,
        "+15550100024": .transferAccept,
        "+15550100025": .transferRefuse405,
        "+15550100026": .transferRefuse603,
        "+15550100027": .transferFailBusy,
        "+15550100028": .transferOddNotify,
        "+15550100029": .transferNoNotify,
        "+15550100030": .refersCaller,
        "+15550100031": .replacesCall,
        "+15550100032": .answersAsPerson,
        "+15550100033": .answersAsVoicemail,
        "+15550100034": .answersAsFax
    ]

    /// What an unlisted number does.
    public static let defaultBehaviour = Behaviour.answerEcho

    /// The behaviour for `number` (a Request-URI user part); unlisted numbers answer and echo.
    public static func behaviour(for number: String) -> Behaviour {
        table[number] ?? defaultBehaviour
    }

    /// The listed numbers in order, for docs and `--help`.
    public static var sortedNumbers: [String] { table.keys.sorted() }
}
