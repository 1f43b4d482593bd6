import Foundation
import IrisAPI
import WebClient

/// Waits for inbound calls of a routing id: each `onNotification` (notify) carries the room
/// id and token `join` and `reject` need. The Iris SDK gets these as push notifications.
public final class IrisNotificationListener: Sendable {
    private let ws: WebSocketClient

    public init(connection: IrisRtcConnection, routingId: String) throws(IrisError) {
        ws = try connection.events(routingId: routingId)
    }

    /// The next `notify` notification, or nil when `timeout` passes or the stream ends.
    public func next(timeout: Double) -> SessionEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text: String?
            do { text = try ws.receive(timeout: max(0.05, deadline.timeIntervalSinceNow)) } catch { return nil }
            guard let text else { return nil }
            if let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(text.utf8)), e.event == .onNotification,
                e.type == "notify"
            {
                return e
            }
        }
        return nil
    }

    public func close() { ws.close() }
}

extension IrisNotificationListener {
    /// Follows a room's events (from the first) until it ends; returns the end reason.
    public static func waitForEnd(
        connection: IrisRtcConnection, roomId: String, timeout: Double = 3600,
        onEvent: ((SessionEvent) -> Void)? = nil
    ) throws(IrisError) -> EndReason? {
        let ws = try connection.events(roomId: roomId, since: 1)
        defer { ws.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text: String?
            do { text = try ws.receive(timeout: 1) } catch { if error.isTimeout { continue } else { return nil } }
            guard let text, let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(text.utf8)) else {
                return nil
            }
            onEvent?(e)
            if e.event == .onSessionEnded { return e.reason }
        }
        return nil
    }
}
