import IrisAPI
import SIP

/// The transfer verbs of the control API (docs/api.md, "Transfers").
extension Gateway {
    /// Hands the call on: `targetTN` (blind: REFER to that number, under the trunk's number
    /// rules, allowed prefixes and caller-id policy, refused as a dial would be) or
    /// `replacesRoomId` (attended: REFER with Replaces of that session's dialog, on the same
    /// trunk). Progress comes as `onSessionTransfer`; on success the session ends `transferred`.
    public func transfer(roomId: String, _ request: TransferRequest) throws(GatewayError) {
        switch (request.targetTN, request.replacesRoomId) {
        case (let target?, nil):
            try transferBlind(roomId, target)
        case (nil, let other?):
            guard other != roomId else { throw .badRequest("replacesRoomId: a session cannot replace itself") }
            try transferAttended(roomId, other)
        default:
            throw .badRequest("give exactly one of targetTN (blind) and replacesRoomId (attended)")
        }
    }

    /// The app's answer to `onSessionTransferRequest` (a carrier's REFER under `transfer.refer: app`).
    public func answerTransfer(roomId: String, accept: Bool) throws(GatewayError) {
        try withSession(roomId) { s throws(GatewayError) in try s.answerReferred(accept: accept) }
    }

    private func transferBlind(_ roomId: String, _ raw: String) throws(GatewayError) {
        try withSession(roomId) { s throws(GatewayError) in
            let outbound = try s.transferable()
            let target: String, caller: String
            do throws(NumberError) {
                target = try s.profile.normalize(raw)
            } catch {
                throw GatewayError(
                    error.code, error.code == IrisCode.callForbidden ? .forbidden : .invalid,
                    "targetTN: " + error.message)
            }
            do throws(NumberError) {
                caller = try outbound.callerId.present(sourceTN: s.ownNumber, target: target)
            } catch {
                throw GatewayError(error.code, .forbidden, "the number a transfer presents: " + error.message)
            }
            guard let proxy = s.proxies.first else { throw .forbidden("trunk \(s.profile.name) has no proxy") }
            let plan = OutboundInvitePlan(
                outbound: outbound, target: target, caller: caller, request: OutboundCallerRequest(),
                host: proxy.hostReference, port: proxy.uriPort, secure: proxy.secure)
            s.startTransfer(
                OutgoingTransfer(
                    machine: s.newTransferMachine(.blind(targetTN: target)), referTo: plan.requestURI,
                    referredBy: s.referredBy, targetTN: target, caller: caller))
        }
    }

    private func transferAttended(_ roomId: String, _ otherId: String) throws(GatewayError) {
        try withSession(roomId) { [self] s throws(GatewayError) in
            let outbound = try s.transferable()
            guard let other = sessions[otherId] else {
                throw endedSnapshots[otherId] != nil ? .ended(otherId) : .notFound(otherId)
            }
            guard other.profile.name == s.profile.name else {
                throw .badRequest(
                    "replacesRoomId: session \(otherId) is on trunk \(other.profile.name), not \(s.profile.name)")
            }
            _ = try other.transferable()
            guard let dialog = other.call?.currentDialog, dialog.remoteTag != nil else {
                throw .wrongState("session \(otherId) has no dialog to replace")
            }
            var referTo = dialog.remoteTarget
            referTo.headers = Replaces(naming: dialog).uriHeader
            let caller =
                (try? outbound.callerId.present(sourceTN: s.ownNumber, target: other.remoteNumber)) ?? s.ownNumber
            var t = OutgoingTransfer(
                machine: s.newTransferMachine(.attended(replacesRoomId: otherId)), referTo: referTo,
                referredBy: s.referredBy, targetTN: nil, caller: caller)
            t.other = other
            s.startTransfer(t)
        }
    }
}

extension GatewaySession {
    /// Checks the session can be transferred now; returns the trunk's outbound part (a
    /// transfer follows its number rules, as a dial would).
    func transferable() throws(GatewayError) -> TrunkProfile.Outbound {
        guard machine.isConnected, call != nil else { throw .wrongState("session \(roomId) is not connected") }
        guard !machine.appLeft else { throw .wrongState("session \(roomId) was transferred") }
        if let t = outgoingTransfer, !t.machine.isOver { throw .wrongState("a transfer of \(roomId) is in progress") }
        if let r = referred, !r.machine.isOver {
            throw .wrongState("the carrier's transfer of \(roomId) is in progress")
        }
        guard merged.isEmpty, mergedInto == nil, mergePending == nil, bridgedWith == nil, replacedCall == nil else {
            throw .wrongState("session \(roomId) is part of a merge")
        }
        guard let outbound = profile.outbound else {
            throw .forbidden("call forbidden: trunk \(profile.name) takes no outbound calls, so no transfers")
        }
        return outbound
    }

    func newTransferMachine(_ kind: TransferMachine.Kind) -> TransferMachine {
        TransferMachine(
            kind: kind, fallback: profile.transfer.fallback, notifyTimeout: Double(profile.transfer.notifyTimeoutSec),
            completeTimeout: Double(profile.transfer.completeTimeoutSec))
    }

    /// Referred-By (RFC 3892): our side of this call, as the carrier knows it.
    var referredBy: NameAddress? {
        guard var local = call?.currentDialog?.localAddress else { return nil }
        local.tag = nil
        local.parameters = []
        return local
    }

    /// The far end's number: the callee of an outbound call, the caller of an inbound one.
    var remoteNumber: String { machine.direction == .outbound ? targetTN : sourceTN }
}
