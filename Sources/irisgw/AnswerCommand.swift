import Foundation
import IrisAPI
import IrisClient

/// `irisgw answer`: waits for an inbound call to a routing id and accepts, rejects or
/// ignores it, printing events like `irisgw call`. Exit status 0 when the chosen action
/// played out (accepted and ended normally; rejected; ignored until it ended), 1 otherwise.
enum AnswerCommand {
    static let usage = """
        usage: irisgw answer --routing-id ID [--action accept|reject|ignore] [--api URL] [--ca-file FILE] [--data-dir DIR]
                             [--tone HZ | --play WAV] [--record WAV] [--hold-after S] [--unhold-after S]
                             [--hangup-after S] [--timeout S] [--json]

        Waits (up to --timeout seconds, default forever) for one call to ID. An https:// --api is
        checked against --ca-file (default $IRISGW_CA_FILE, else the system store).

        """

    static func run(_ args: [String]) -> Int32 {
        var options = ClientOptions()
        var routingId: String?
        var action = "accept"
        var timeout = Double.infinity
        var reader = ArgumentReader(args)
        do {
            while let option = reader.next() {
                if try options.parse(option, &reader) { continue }
                switch option {
                case "--routing-id": routingId = try reader.value()
                case "--action":
                    action = try reader.value()
                    guard ["accept", "reject", "ignore"].contains(action) else {
                        throw UsageError("--action is accept, reject or ignore")
                    }
                case "--timeout": timeout = try reader.seconds()
                case "-h", "--help":
                    writeOut(usage)
                    return 0
                default: throw UsageError("unknown option \(option)")
                }
            }
            guard let routingId else { throw UsageError("--routing-id is required") }
            return try answer(routingId: routingId, action: action, timeout: timeout, options: options)
        } catch let e as UsageError {
            writeError("irisgw answer: \(e)\n\n" + usage)
            return 2
        } catch {
            writeError("irisgw answer: \(error)\n")
            return 3
        }
    }

    static func answer(routingId: String, action: String, timeout: Double, options: ClientOptions) throws -> Int32 {
        let connection = try options.connection()
        let printer = EventPrinter(json: options.json)
        let listener = try IrisNotificationListener(connection: connection, routingId: routingId)
        // Said on stderr under --json, so a script (or a test) can start the call after it.
        if options.json {
            writeError("waiting for a call to \(routingId)\n")
        } else {
            printer.line("waiting for a call to \(routingId)")
        }
        guard let note = listener.next(timeout: timeout), let room = note.roomid, let token = note.roomtoken else {
            listener.close()
            writeError("irisgw answer: no call within the timeout\n")
            return 1
        }
        listener.close()
        printer.print(note)
        printer.notificationShown = true
        let session = IrisRtcAudioSession(connection: connection, stream: try options.stream(), delegate: printer)
        switch action {
        case "reject":
            try IrisRtcAudioSession.reject(connection: connection, roomId: room, roomToken: token)
            printer.line("rejected")
            session.stop()
            return 0
        case "ignore":
            // Watch the session until the gateway gives up on it (480) or the caller cancels.
            let watcher = try IrisNotificationListener.waitForEnd(connection: connection, roomId: room) { e in
                if e.event != .onNotification || e.type != "notify" { printer.print(e) }  // printed above
            }
            session.stop()
            return watcher == .noAnswer || watcher == .canceled ? 0 : 1
        default:
            printer.onConnected = { options.scheduleInCall(session, printer) }
            try session.join(roomId: room, roomToken: token)
            while !session.waitForEnd(timeout: 3600) {}
            if let path = options.recordWAV { try session.stream.record(to: path) }
            session.stop()
            return printer.connected && session.endedEvent?.reason == .completed ? 0 : 1
        }
    }
}
