import Foundation
import IrisAPI
import Media
import SIP

/// The in-call Iris verbs and the state queries.
extension Gateway {
    /// Iris `hold`: a re-INVITE with `a=sendonly`; `Hold` is reported when the 200 arrives.
    public func hold(roomId: String) throws(GatewayError) { try setHold(roomId, true) }

    /// Iris `unhold`: a re-INVITE with `a=sendrecv`; `Connected` follows the 200.
    public func unhold(roomId: String) throws(GatewayError) { try setHold(roomId, false) }

    private func setHold(_ roomId: String, _ hold: Bool) throws(GatewayError) {
        try withSession(roomId) { s throws(GatewayError) in
            guard s.machine.isConnected else { throw .wrongState("session \(roomId) is not connected") }
            guard s.machine.pendingHold == nil else { throw .wrongState("a hold or unhold is already in progress") }
            if hold && s.machine.heldLocally { throw .wrongState("session \(roomId) is already on hold") }
            if !hold && !s.machine.heldLocally { throw .wrongState("session \(roomId) is not on hold") }
            s.handle(.localHold(hold))
        }
    }

    /// Iris `mute` / `unmute`: the app's audio stops reaching the carrier (silence is sent).
    public func setMuted(roomId: String, _ muted: Bool) throws(GatewayError) {
        try withSession(roomId) { s throws(GatewayError) in
            guard s.media != nil else { throw .wrongState("session \(roomId) has no media yet") }
            s.muted = muted
            s.applySilence()
        }
    }

    /// Iris `insertDTMFtone`: RFC 4733 digits toward the carrier.
    public func sendDTMF(roomId: String, _ request: DTMFRequest) throws(GatewayError) {
        let duration = request.durationMs ?? 100
        guard (40...2000).contains(duration) else { throw .badRequest("durationMs must be 40-2000") }
        guard !request.tones.isEmpty, request.tones.count <= 64, request.tones.allSatisfy({ DTMFDigit($0) != nil })
        else {
            throw .badRequest("tones must be 1-64 of 0-9 * # A-D")
        }
        try withSession(roomId) { s throws(GatewayError) in
            guard s.machine.isConnected || s.machine.earlyMedia, let media = s.media else {
                throw .wrongState("session \(roomId) is not connected")
            }
            guard s.trunkLeg?.telephoneEvent != nil else {
                throw .wrongState("the carrier did not negotiate RFC 4733 telephone-event")
            }
            do { try media.sendDTMF(request.tones, on: .trunk, durationMs: duration) } catch {
                throw .badRequest("tones: \(error)")
            }
        }
    }

    /// Iris `merge`: the held session's trunk leg is taken off hold (re-INVITE sendrecv when
    /// the app held it), then both trunk legs and this session's platform leg are mixed into
    /// a three-way call; `onSessionMerged` follows. Closing this session ends both.
    public func merge(roomId: String, _ request: MergeRequest) throws(GatewayError) {
        let heldId = request.heldRoomId
        guard heldId != roomId else { throw .badRequest("heldRoomId: a session cannot merge with itself") }
        try withSession(roomId) { [self] active throws(GatewayError) in
            guard active.machine.isConnected, active.machine.status != .hold else {
                throw .wrongState("session \(roomId) is not connected (unhold it first)")
            }
            guard let held = sessions[heldId] else {
                throw endedSnapshots[heldId] != nil ? .ended(heldId) : .notFound(heldId)
            }
            guard held.machine.isConnected else { throw .wrongState("session \(heldId) is not connected") }
            for s in [active, held] where s.mergedInto != nil || !s.merged.isEmpty || s.mergePending != nil {
                throw .wrongState("session \(s.roomId) is already part of a merge")
            }
            // The three-way mix takes the active session's platform leg from RTP; an agent's
            // audio is not there to mix.
            guard !active.services.hasAgent else {
                throw .wrongState("session \(roomId)'s platform leg is a voice agent: merge into the other session")
            }
            active.startMerge(with: held)
        }
    }

    /// Iris `close`: CANCEL before an answer, BYE after; a ringing inbound call gets 603.
    public func close(roomId: String) throws(GatewayError) {
        try withSession(roomId) { s in s.handle(.close) }
    }

    /// A session's state now (live or recently ended).
    public func snapshot(roomId: String) throws(GatewayError) -> SessionSnapshot {
        enum Found: Sendable { case live(MediaCall?), ended(SessionSnapshot), none }
        let found: Found = ua.loop.sync { [self] in
            if let s = sessions[roomId] { return .live(s.media) }
            return endedSnapshots[roomId].map { .ended($0) } ?? .none
        }
        switch found {
        case .none: throw .notFound(roomId)
        case .ended(let snap): return snap
        case .live(let media):
            // Media statistics come from the media thread, outside the SIP loop.
            let stats = media?.statistics()
            let snap: SessionSnapshot? = ua.loop.sync { [self] in
                sessions[roomId]?.snapshot(stats: stats) ?? endedSnapshots[roomId]
            }
            guard let snap else { throw .notFound(roomId) }
            return snap
        }
    }

    /// Whether this node holds `roomId`, live or recently ended (in a cluster, a request for
    /// a session it does not hold goes to the node that does).
    public func holds(roomId: String) -> Bool {
        ua.loop.sync { [self] in sessions[roomId] != nil || endedSnapshots[roomId] != nil }
    }

    /// Every live session, without media statistics.
    public func list() -> [SessionSnapshot] {
        ua.loop.sync { [self] in sessions.values.map { $0.snapshot(stats: nil) }.sorted { $0.roomId < $1.roomId } }
    }
}
