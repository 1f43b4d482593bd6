import SDP

extension InviteSessionMachine {
    /// Where a request goes.
    public enum Hop: Sendable, Equatable {
        /// Where the INVITE went (UAC) or came from (UAS).
        case peer
        /// The dialog's next hop (first route or remote target), over the call's transport.
        case uri(SIPURI)
    }

    /// What the machine reports to the application (`SIPCallDelegate`).
    public enum Report: Sendable, Equatable {
        /// UAS: a new call passed the checks (100 sent); hand it to the agent's delegate.
        case incomingCall
        /// A 1xx other than 100 (a reliable one already PRACKed).
        case provisional(SIPMessage)
        /// A 100 Trying to our INVITE.
        case trying(SIPMessage)
        /// The 2xx to our INVITE (ACK sent), or the ACK to our 2xx.
        case connected(SIPMessage)
        /// The answer to our offer (in a 2xx, or in the ACK to our offering 2xx).
        case answer(SessionDescription, in: SIPMessage)
        /// An in-dialog request other than BYE, re-INVITE, UPDATE, PRACK, REFER or NOTIFY, answered 200.
        case request(SIPMessage)
        /// A request sent with `.sendRequest` got its final status (408 for no answer, 503
        /// when it could not be sent), with the response when there was one.
        case requestCompleted(method: String, cseq: UInt32, status: Int, response: SIPMessage?)
        /// Our re-INVITE or UPDATE got this final status.
        case offerCompleted(status: Int)
        /// Once, last.
        case ended(SIPCallEnd, SIPMessage?)
    }

    /// What the machine asks the driver to do, in order.
    public enum Action: Sendable, Equatable {
        /// Send `request` toward `to` in a new client transaction tagged `for`. The driver adds
        /// Via (a CANCEL gets the INVITE's, §9.1) and User-Agent.
        case send(SIPMessage, for: ClientRequest, to: Hop)
        /// Send this ACK for a 2xx (no transaction, §13.2.2.4): Via and User-Agent added, to the
        /// hop. With `remember`, keep its bytes for `.resendACK`.
        case sendACK(SIPMessage, to: Hop, remember: Bool)
        /// Send the remembered ACK again (its 2xx was retransmitted).
        case resendACK
        /// Answer a request in its server transaction.
        case respond(SIPMessage, in: ServerTransaction)
        /// Send a response again to the peer outside any transaction (2xx until ACK, reliable
        /// 1xx until PRACK, the 2xx to a late INVITE copy).
        case retransmit(SIPMessage)
        /// Arm the named timer for this monotonic time, replacing a running one.
        case startTimer(Timer, at: Double)
        /// Disarm the named timer.
        case cancelTimer(Timer)
        /// Stop the INVITE client transaction (our CANCEL's 64*T1 ran out, or the failover
        /// time passed with no response).
        case terminateInviteTransaction
        /// Tell the application.
        case report(Report)
        /// A REFER or NOTIFY in the dialog: the application decides the response (RFC 3515:
        /// 202 or a refusal; RFC 6665: 200 or 481); the driver sends it in `in`.
        case askForResponse(SIPMessage, in: ServerTransaction)
        /// Ask the application for the answer to `offer` (nil: it wants our offer) in
        /// `request`, and feed `.offerAnswer` before any other event. Ends its batch.
        case askForAnswer(offer: SessionDescription?, in: SIPMessage)
        /// The call is over and its 64*T1 of retransmission handling too: drop it.
        case remove
    }
}
