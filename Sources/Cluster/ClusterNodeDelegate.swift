import IrisAPI

/// What the cluster asks of the gateway on its node. Called on the cluster's loop: nothing
/// here may block (hop to the gateway's own loop and answer through the callbacks).
public protocol ClusterNodeDelegate: AnyObject, Sendable {
    /// The node's load for its record: sessions held and the media load (0-1).
    func clusterLoad() -> (sessions: Int, mediaLoad: Double)
    /// A dead member's sessions: end each (BYE its dialog with a `Reason`, CANCEL a ringing
    /// INVITE), close their records and tell their apps (`onSessionEnded`, `nodeLost`);
    /// call `done` when that is under way, so the member's state is released.
    func takeOver(_ dead: DeadMemberSessions, done: @escaping @Sendable () -> Void)
    /// The cluster counted this node dead and ended its calls: end them here too.
    func lostMembership()
    /// What the node holds now (sessions and their dialogs), to write back after Redis
    /// lost it.
    func heldNow() -> (sessions: [HeldSession], dialogs: [String: String])
    /// Another node's event, as it stamped it.
    func remoteEvent(_ event: SessionEvent, routingId: String?)
}
