/// Call transfer (RFC 3515 REFER, RFC 3891 Replaces, RFC 3892 Referred-By) on an INVITE
/// dialog: the requests, built here so the layer above names only numbers and states.
extension SIPCall {
    /// Sends REFER asking the peer to call `target` (with `?Replaces=` in its URI for an
    /// attended transfer). Returns the REFER's CSeq number: the `id` of the `refer` event its
    /// NOTIFYs carry. nil when there is no dialog (or from a delegate callback, see `request`).
    @discardableResult
    public func refer(to target: SIPURI, referredBy: NameAddress?, headers: [SIPHeader] = []) -> UInt32? {
        var all = [SIPHeader(.referTo, NameAddress(uri: target).serialize())]
        if let referredBy { all.append(SIPHeader(.referredBy, referredBy.serialize())) }
        return request("REFER", headers: all + headers)
    }

    /// Sends the NOTIFY of a REFER's implicit subscription (RFC 3515 §2.4.4): the referred
    /// call's progress as a sipfrag, `terminated` with the final status.
    @discardableResult
    public func notifyRefer(id: UInt32, progress: SIPFrag) -> UInt32? {
        let notify = ReferNotification(id: id, progress: progress)
        return request("NOTIFY", headers: notify.headers, contentType: SIPFrag.contentType, body: notify.body)
    }

    /// Test peers only (the carrier simulator's `transfer-odd-notify`): the next REFER that
    /// arrives gets a NOTIFY with `progress` before its response goes out
    /// (`TestPeerMisbehaviour.referNotifiedFirst`).
    public func notifyBeforeAnsweringNextRefer(_ progress: SIPFrag) {
        misbehaviour.referNotifiedFirst = progress
    }
}

/// The headers and body of one NOTIFY of a REFER's implicit subscription (RFC 3515 §2.4.4):
/// `Event: refer;id=<REFER CSeq>`, `active` until the sipfrag's status is final, then
/// `terminated;reason=noresource`.
struct ReferNotification {
    let headers: [SIPHeader]
    let body: [UInt8]

    init(id: UInt32, progress: SIPFrag) {
        let state =
            progress.status >= 200
            ? SubscriptionState(.terminated, reason: "noresource") : SubscriptionState(.active, expires: 60)
        headers = [
            SIPHeader(.event, EventHeader(package: "refer", id: String(id)).serialize()),
            SIPHeader(.subscriptionState, state.serialize())
        ]
        body = progress.serialize()
    }
}

extension SIPUserAgent {
    /// The call whose dialog an INVITE's `Replaces` names (RFC 3891 §3): same Call-ID, its
    /// local tag the to-tag and its remote tag the from-tag. nil when none (answered 481).
    public func call(replacedBy replaces: Replaces) -> SIPCall? {
        loop.assertInLoop()
        return calls[replaces.callID]?.first { call in
            guard let d = call.currentDialog else { return false }
            return d.localTag == replaces.toTag && d.remoteTag == replaces.fromTag
        }
    }
}
