import IrisAPI

/// The `expectTransfer` step's judgement on the events so far: plain functions of the event
/// list, so the runner's loop only polls them.
extension SuiteRunner {
    enum TransferMatch: Equatable {
        /// The step holds: the matching event's index in the list.
        case matched(at: Int)
        /// It never can: why.
        case failed(String)
        /// Not yet.
        case pending
    }

    /// The first `onSessionTransfer` from index `from` with `state` (and `sipCode`) matches.
    /// The step fails at once on one with that state but another code, on one that settles
    /// the transfer otherwise (`succeeded` or `failed` while another state is expected), and
    /// on the session's end.
    static func transferMatch(
        _ state: TransferState, sipCode: Int?, in events: [SessionEvent], from: Int
    ) -> TransferMatch {
        let want = "transfer \(state.rawValue)" + (sipCode.map { " with SIP \($0)" } ?? "")
        for i in events.indices where i >= from && events[i].event == .onSessionTransfer {
            guard let got = events[i].transfer?.state else { continue }
            if got == state {
                if sipCode == nil || events[i].sip?.code == sipCode { return .matched(at: i) }
                return .failed("expected \(want); got \(describe(events[i]))")
            }
            if got == .succeeded || got == .failed {
                return .failed("expected \(want); the transfer ended \(describe(events[i]))")
            }
        }
        if let end = events.last(where: { $0.event == .onSessionEnded }) {
            return .failed(
                "expected \(want); the call ended \(end.reason?.rawValue ?? "?") first"
                    + " (transfer events: \(transfers(events, from: from)))")
        }
        return .pending
    }

    /// The failure of an `expectTransfer` whose event did not come in time.
    static func transferTimedOut(
        _ state: TransferState, sipCode: Int?, within: Double, events: [SessionEvent], from: Int
    ) -> String {
        "expected transfer \(state.rawValue)" + (sipCode.map { " with SIP \($0)" } ?? "")
            + " within \(within) s; transfer events: \(transfers(events, from: from))"
    }

    /// "requested, trying (100 Trying)", or "none".
    static func transfers(_ events: [SessionEvent], from: Int) -> String {
        let list = events.indices.filter { $0 >= from && events[$0].event == .onSessionTransfer }.map {
            describe(events[$0])
        }
        return list.isEmpty ? "none" : list.joined(separator: ", ")
    }

    /// "failed (486 Busy Here: the target is busy)".
    static func describe(_ e: SessionEvent) -> String {
        let sip = e.sip.map { "\($0.code)" + ($0.reason.isEmpty ? "" : " " + $0.reason) }
        let detail = [sip, e.message].compactMap { $0 }.joined(separator: ": ")
        return (e.transfer?.state.rawValue ?? "?") + (detail.isEmpty ? "" : " (\(detail))")
    }
}
