import Foundation
import SIP
import TestSupport

/// What the transfer tests with outside peers (pjsua2, baresip) share: our agent as the
/// party that answers and takes REFER and NOTIFY, and the NOTIFYs of a REFER.
extension TestAgent {
    /// A callee that answers every call (an SDP answer to its offer) and takes REFER (202)
    /// and NOTIFY (200); `onCall` runs first, on the SIP loop.
    func answeringTransfers(
        _ onCall: @escaping @Sendable (SIPCall, CallRecorder) -> Void = { _, _ in }
    ) async -> ScriptedCallee {
        await scripted { call, recorder in
            recorder.respondTo = CallRecorder.takingTransfers
            onCall(call, recorder)
            call.answer(sdp: call.remoteSDP.flatMap { SDP.answer(to: $0) } ?? SDP.offer())
        }
    }
}

extension CallRecorder {
    /// REFER 202 Accepted, NOTIFY 200.
    static let takingTransfers: @Sendable (SIPCall, SIPMessage) -> SIPRequestResponse = { _, request in
        SIPRequestResponse(status: request.method == "REFER" ? 202 : 200)
    }

    /// The NOTIFYs received so far, once one ends the subscription (or after `timeout`).
    func referNotifies(timeout: Double = 10) async -> [SIPMessage] {
        func all() -> [SIPMessage] { messages.filter { $0.method == "NOTIFY" } }
        _ = await eventually(timeout: timeout) { all().contains { $0.subscriptionState?.value == .terminated } }
        return all()
    }
}

extension SIPMessage {
    /// The status of a NOTIFY's `message/sipfrag` body.
    var sipfragStatus: Int? { try? SIPFrag.parse(body).status }

    /// A NOTIFY of the `refer` event of the REFER with CSeq `id`: `id` may be left out for
    /// the first REFER of a dialog (RFC 3515 §2.4.6; pjsua does, baresip does not).
    func isReferNotify(id: UInt32) -> Bool {
        event?.package == "refer" && (event?.id == nil || event?.id == String(id))
    }
}

extension ScriptedCallee {
    /// The `index`th call this callee took and its recorder, once that call is connected
    /// (nil after `timeout`).
    func connected(_ index: Int = 0, timeout: Double = 10) async -> (SIPCall, CallRecorder)? {
        var found: (SIPCall, CallRecorder)?
        _ = await eventually(timeout: timeout) {
            guard recorders.count > index, recorders[index].events.contains(.connected),
                let call = recorders[index].call
            else { return false }
            found = (call, recorders[index])
            return true
        }
        return found
    }
}
