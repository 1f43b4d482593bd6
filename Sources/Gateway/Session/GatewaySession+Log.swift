import Foundation
import IrisAPI
import Logging

/// Each call's two lines in the log (component `calls`, level info): its start and its end,
/// with the ids that find it everywhere else (the API, the records, a SIP trace). Numbers
/// yes; never a token, a key or a password.
extension GatewaySession {
    /// The calls logger with this session's `roomId`, `traceId` and, once a SIP call exists,
    /// its `callId`.
    var callLog: Logger {
        Log.calls.with(["roomId": "\(roomId)", "traceId": "\(traceId)"]).with("callId", call.map { .string($0.callID) })
    }

    /// Once the session is set up: its INVITE sent (outbound; no Call-ID yet while a proxy's
    /// name is looked up) or the carrier's INVITE taken (inbound); at its end if it ended
    /// before that (an INVITE that could not be sent). Once. On the SIP loop.
    func logStarted() {
        guard !loggedStart else { return }
        loggedStart = true
        guard Log.calls.isEnabled(.info) else { return }
        let log = callLog.with("routingId", routingId.map { .string($0) })
        let direction = machine.direction.rawValue
        let callID = call.map { ", Call-ID \($0.callID)" } ?? ""
        log.info(
            "call started: \(direction) on trunk \(profile.name), room \(roomId), trace \(traceId)\(callID), "
                + "\(sourceTN) to \(targetTN)",
            ["direction": "\(direction)", "profile": "\(profile.name)", "from": "\(sourceTN)", "to": "\(targetTN)"])
    }

    /// As the session ends: why, the SIP status that ended it (none when the app or a timer
    /// did), and how long it lasted from its start. On the SIP loop.
    func logEnded(_ reason: EndReason, _ sip: SIPDetails?) {
        logStarted()
        guard Log.calls.isEnabled(.info) else { return }
        let log = callLog.with("sipStatus", sip.map { .int($0.code) }).with("sipReason", sip.map { .string($0.reason) })
            .with("q850Cause", sip?.cause.map { .int($0) })
        let durationMs = Int(((Date().timeIntervalSince1970 - startedAt) * 1000).rounded())
        let status = sip.map { ", SIP \($0.code) \($0.reason)" } ?? ""
        let callID = call.map { ", Call-ID \($0.callID)" } ?? ""
        log.info(
            "call ended: room \(roomId), trace \(traceId)\(callID), reason \(reason.rawValue)\(status), after "
                + String(format: "%.3f s", Double(durationMs) / 1000),
            [
                "direction": "\(machine.direction.rawValue)", "profile": "\(profile.name)",
                "reason": "\(reason.rawValue)", "durationMs": .int(durationMs)
            ])
    }
}
