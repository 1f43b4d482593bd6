import SDP

extension InviteSessionMachine {
    /// Which side of the INVITE transaction we are.
    public enum Role: Sendable, Equatable {
        /// We sent the INVITE.
        case uac
        /// We received it.
        case uas
    }

    /// Where the session stands (what `SIPCall.state` reports).
    public enum State: Sendable, Equatable {
        /// INVITE sent or received, nothing else yet.
        case calling
        /// A provisional response with a To tag was sent or received.
        case early
        /// The 2xx to our INVITE arrived (ACK sent), or the ACK to our 2xx.
        case confirmed
        /// Ended; every later event is answered as RFC 3261 asks, but nothing is reported.
        case terminated(SIPCallEnd)
    }

    /// The client transactions the machine starts. The driver tags each transaction's
    /// outcome with the request it was started for.
    public enum ClientRequest: Sendable, Hashable {
        /// The INVITE (any attempt: auth and 422 retries are new INVITEs).
        case invite
        /// A PRACK of a reliable provisional response (its outcome is not needed).
        case prack
        /// Our CANCEL (its outcome is not needed: the INVITE's final response decides).
        case cancel
        /// Our BYE (a 401/407 may be answered once).
        case bye
        /// The BYE that ends an extra dialog a forked 2xx created (outcome not needed).
        case forkBye
        /// A re-INVITE or UPDATE carrying our offer.
        case offer
        /// A session-timer refresh without SDP (RFC 4028).
        case refresh
        /// An INFO (outcome not needed).
        case info
        /// Another request in the dialog (REFER, NOTIFY), by method and CSeq number: its
        /// final status is reported (`.requestCompleted`).
        case other(method: String, cseq: UInt32)
    }

    /// The machine's named timers; `.startTimer` replaces the running one of that name.
    public enum Timer: Sendable, Hashable, CaseIterable {
        /// UAS: retransmit our 2xx (to the INVITE or a re-INVITE) until its ACK (RFC 6026 §8.1).
        case responseRetransmit
        /// UAS: retransmit a reliable provisional until its PRACK (RFC 3262 §3).
        case provisionalRetransmit
        /// UAC: 64*T1 after our CANCEL with no final response, the INVITE counts as cancelled.
        case cancelGuard
        /// UAC: the policy's `failoverTimeout` after the INVITE with no response at all: the
        /// INVITE is abandoned (`.noProvisional`).
        case failover
        /// Retry of an offer that met 491 (RFC 3261 §14.1).
        case glareRetry
        /// The RFC 4028 session timer (`SessionTimer`'s single timer).
        case sessionTimer
        /// 64*T1 after the end: the call leaves the agent's table (until then it still
        /// answers retransmissions).
        case removal
    }

    /// A re-INVITE or UPDATE offer.
    public enum OfferMethod: String, Sendable, Equatable {
        /// A re-INVITE (RFC 3261 §14).
        case reInvite = "INVITE"
        /// An UPDATE (RFC 3311).
        case update = "UPDATE"
    }

    /// What the driver tells the machine. Every event comes with `now` (monotonic seconds).
    public enum Event: Sendable, Equatable {
        /// UAC: send the INVITE. UAS: check the INVITE (422) and send 100 Trying.
        case start

        // MARK: Received

        /// A response one of our client transactions delivered.
        case response(SIPMessage, to: ClientRequest)
        /// That transaction timed out (Timer B or F).
        case requestTimeout(ClientRequest)
        /// That transaction failed in the transport.
        case transportError(ClientRequest)
        /// The request could not be handed to a transaction at all.
        case notSent(ClientRequest)
        /// A response no transaction matched, that `claims(strayResponse:)` accepted: a
        /// retransmitted 2xx (osip ends the INVITE client transaction at the first 2xx).
        case strayResponse(SIPMessage)
        /// A request inside the dialog (or early dialog): BYE, re-INVITE, UPDATE, PRACK, INFO.
        case request(SIPMessage, in: ServerTransaction)
        /// UAS: a CANCEL matching our INVITE server transaction (§9.2).
        case cancel(SIPMessage, in: ServerTransaction)
        /// An ACK outside any transaction (for a 2xx) that `dialogMatches` accepted.
        case ack(SIPMessage)
        /// UAS: our INVITE again, after its server transaction ended (`isRetransmission(of:)`).
        case inviteRetransmission(SIPMessage)
        /// The named timer fired.
        case timerFired(Timer)

        // MARK: Commands

        /// UAS: 180, or 183 with `sdp`; `reliable` nil follows the policy.
        case ring(sdp: SessionDescription?, status: Int?, reliable: Bool?)
        /// UAS: 200 with `sdp`.
        case answer(sdp: SessionDescription?, headers: [SIPHeader])
        /// UAS: a final non-2xx response.
        case reject(status: Int, reason: String?, headers: [SIPHeader])
        /// Either side: CANCEL, a rejection or BYE, whatever the state needs.
        case hangup(status: Int, headers: [SIPHeader])
        /// UAC: CANCEL our INVITE (deferred until a provisional response arrives, §9.1).
        case cancelInvite
        /// Send our offer in a re-INVITE or UPDATE; `parts` go beside the SDP in a
        /// `multipart/mixed` body (RFC 5621), none: SDP alone.
        case sendOffer(OfferMethod, sdp: SessionDescription, headers: [SIPHeader], parts: [MultipartBody.Part] = [])
        /// Send an INFO with this body.
        case sendInfo(contentType: String, body: [UInt8], headers: [SIPHeader])
        /// Send another request in the dialog (REFER, NOTIFY) with these headers and body.
        case sendRequest(method: String, headers: [SIPHeader], contentType: String?, body: [UInt8])
        /// The application's answer to the last `.askForAnswer` (nil: it has none).
        case offerAnswer(SessionDescription?)
    }
}
