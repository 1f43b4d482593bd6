import IrisAPI
import SDP
import SIP

/// An INVITE with `Replaces` (RFC 3891) from the trunk for a dialog this session holds: the
/// carrier (or a PBX behind it) moved the far end to a new leg, and the new leg takes the old
/// one's place under the same session; the app keeps its audio.
extension Gateway {
    /// Handles the INVITE when its Replaces names a dialog of ours: true when it did (taken,
    /// or refused as RFC 3891 §3 says). A Replaces naming nothing of ours is 481.
    func takeReplacing(_ call: SIPCall, _ replaces: Replaces) {
        guard let old = ua.call(replacedBy: replaces), let s = sessions.values.first(where: { $0.call === old }),
            !old.isTerminated
        else {
            call.reject(status: 481, reason: "Call/Transaction Does Not Exist")
            return
        }
        // Only the trunk that carries the call may replace it.
        guard old.peer.address.host == call.source.address.host || old.source.address.host == call.source.address.host
        else {
            call.reject(status: 403, reason: "Forbidden")
            return
        }
        if replaces.earlyOnly, old.state == .confirmed {
            call.reject(status: 486, reason: "Busy Here")
            return
        }
        guard old.state == .confirmed, s.machine.isConnected, s.replacedCall == nil, s.bridgedWith == nil,
            s.referred.map({ $0.machine.isOver }) ?? true
        else {
            call.reject(status: 491, reason: "Request Pending")
            return
        }
        s.replace(old, with: call)
    }
}

extension GatewaySession {
    /// Answers the new leg on our media (its offer applied to the trunk leg) and, once its ACK
    /// comes, hangs up the old one.
    func replace(_ old: SIPCall, with new: SIPCall) {
        guard let media, let offer = new.remoteSDP else {
            new.reject(status: 488, reason: "Not Acceptable Here")
            return
        }
        let previous = (sdes, trunkLeg)
        sdes = SDESExchange(media: profile.media, overTLS: new.peer.transport == .tls)
        guard applyTrunkSDP(offer, isOffer: true), let leg = trunkLeg else {
            (sdes, trunkLeg) = previous
            new.reject(status: 488, reason: "Not Acceptable Here")
            return
        }
        new.delegate = self
        replacedCall = old
        call = new
        gateway.captures.bind(callID: new.callID, to: capture, peer: new.peer.address.host)
        new.answer(
            sdp: MediaNegotiation.answer(for: leg, address: trunkSDPAddress(media), session: trunkSession.next()))
    }

    /// The new leg's ACK: the old leg goes (BYE), and the app hears of it.
    func replacementConfirmed(_ new: SIPCall) {
        guard let old = replacedCall else { return }
        replacedCall = nil
        old.hangup()
        if let snapshot = new.dialogSnapshot { gateway.keepDialog(self, snapshot) }
        if profile.media.rtpTimeoutSec > 0 { media?.armRTPTimeout(Double(profile.media.rtpTimeoutSec)) }
        var e = SessionEvent(event: .onSessionTransfer, roomId: roomId, traceId: traceId)
        let info = TransferInfo(
            state: .succeeded, by: "carrier", method: "replaces", referredBy: new.invite[.referredBy])
        e.transfer = info
        e.message = "the carrier replaced the call's trunk leg (INVITE with Replaces)"
        publishTransferEvent(e)
        recordTransfer(info, partner: nil)
    }
}
