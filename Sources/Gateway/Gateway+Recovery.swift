import Foundation
import SIP

extension DialogSnapshot {
    /// JSON text for the record store.
    var json: String { Gateway.json(self) }

    /// Reads `json`; nil for anything else.
    init?(json: String) {
        guard let value = try? JSONDecoder().decode(DialogSnapshot.self, from: Data(json.utf8)) else { return nil }
        self = value
    }
}

extension Gateway {
    /// The `Reason` of the BYE sent for a call a crash left up (RFC 3326; Q.850 41 is
    /// "temporary failure").
    static let restartReason = SIPHeader(.reason, "Q.850;cause=41;text=\"gateway restarted\"")

    /// BYEs every dialog the previous process left up (SIGKILL, a crash), so the carrier
    /// does not keep half-open calls and bill them. Their records were closed at open.
    /// On the SIP loop, after the sockets are open.
    func byeAbandonedDialogs() {
        let dialogs = records.abandonedDialogs
        guard !dialogs.isEmpty else { return }
        let sent = byeDialogs(dialogs, reason: Self.restartReason, by: "recovery")
        Log.gateway.notice(
            "recovery: sent BYE for \(sent) call(s) the previous process left up", ["byes": .int(sent)])
    }

    /// BYEs dialogs another process left up (room id → dialog JSON) along their routes, with
    /// `reason`; returns how many went. `by` names the caller in the log. On the SIP loop.
    func byeDialogs(_ dialogs: [String: String], reason: SIPHeader, by: String) -> Int {
        var sent = 0
        for (room, json) in dialogs.sorted(by: { $0.key < $1.key }) {
            guard let snapshot = DialogSnapshot(json: json) else {
                Log.gateway.warning(
                    "\(by): room \(room): the stored dialog cannot be read; no BYE sent", ["roomId": "\(room)"])
                continue
            }
            var peer = snapshot.peer
            if peer.transport == .tls {
                peer.tls = tlsTarget(forStoredName: snapshot.tlsServerName ?? peer.address.host)
            }
            guard ua.sendBye(in: snapshot, to: peer, headers: [reason]) else {
                Log.gateway.warning(
                    "\(by): room \(room): the stored dialog cannot be read; no BYE sent", ["roomId": "\(room)"])
                continue
            }
            sent += 1
        }
        return sent
    }
}
