/// One operation of the control API: a method on a path template (`/v1/sessions/{roomId}`),
/// as docs/openapi.yaml lists it.
public struct ControlAPIRoute: Sendable, Hashable, CustomStringConvertible {
    /// `GET`, `POST`, `DELETE`, `HEAD`.
    public let method: String
    /// The path with `{name}` for each variable segment.
    public let path: String

    public var description: String { "\(method) \(path)" }
}

/// Who may call an endpoint.
enum EndpointAccess: Sendable, Equatable {
    /// Nobody needs a key (health, the dialer page, the OpenAPI document).
    case open
    /// The API key or a page token (the page's own sessions and events only).
    case keyOrPage
    /// The API key only: a page token gets 403 "a page token cannot `what`".
    case keyOnly(what: String)
}

/// Every endpoint the control API serves. The dispatcher matches requests against
/// `ControlAPIRoutes.all`, built from these cases, and switches over the case it finds: an
/// endpoint cannot be served without being listed, nor listed without being served.
enum ControlAPIEndpoint: CaseIterable, Sendable {
    case createSession, listSessions, getSession, closeSession
    case sipTrace, pcap, recordingFile
    case join, reject, hold, unhold, mute, unmute, merge, dtmf
    case transfer, acceptTransfer, declineTransfer, recording, startStream, stopStream
    case events, pageTokens, adminReload, openAPI, metrics, health, ready, app, appFile

    /// The methods and the path template.
    var methods: [String] {
        switch self {
        case .createSession, .join, .reject, .hold, .unhold, .mute, .unmute, .merge, .dtmf, .transfer,
            .acceptTransfer, .declineTransfer, .recording, .startStream, .pageTokens, .adminReload:
            ["POST"]
        case .closeSession, .stopStream: ["DELETE"]
        case .app, .appFile: ["GET", "HEAD"]
        case .listSessions, .getSession, .sipTrace, .pcap, .recordingFile, .events, .openAPI, .metrics, .health,
            .ready:
            ["GET"]
        }
    }

    var path: String {
        switch self {
        case .createSession, .listSessions: "/v1/sessions"
        case .getSession, .closeSession: "/v1/sessions/{roomId}"
        case .sipTrace: "/v1/sessions/{roomId}/sip"
        case .pcap: "/v1/sessions/{roomId}/pcap"
        case .recordingFile, .recording: "/v1/sessions/{roomId}/recording"
        case .join: "/v1/sessions/{roomId}/join"
        case .reject: "/v1/sessions/{roomId}/reject"
        case .hold: "/v1/sessions/{roomId}/hold"
        case .unhold: "/v1/sessions/{roomId}/unhold"
        case .mute: "/v1/sessions/{roomId}/mute"
        case .unmute: "/v1/sessions/{roomId}/unmute"
        case .merge: "/v1/sessions/{roomId}/merge"
        case .dtmf: "/v1/sessions/{roomId}/dtmf"
        case .transfer: "/v1/sessions/{roomId}/transfer"
        case .acceptTransfer: "/v1/sessions/{roomId}/acceptTransfer"
        case .declineTransfer: "/v1/sessions/{roomId}/declineTransfer"
        case .startStream: "/v1/sessions/{roomId}/streams"
        case .stopStream: "/v1/sessions/{roomId}/streams/{streamId}"
        case .events: "/v1/events"
        case .pageTokens: "/v1/page-tokens"
        case .adminReload: "/v1/admin/reload"
        case .openAPI: "/v1/openapi.json"
        case .metrics: "/metrics"
        case .health: "/healthz"
        case .ready: "/readyz"
        case .app: StaticFiles.prefix
        case .appFile: StaticFiles.prefix + "/{file}"
        }
    }

    var access: EndpointAccess {
        switch self {
        case .health, .ready, .app, .appFile, .openAPI: .open
        case .createSession, .getSession, .closeSession, .sipTrace, .pcap, .join, .reject, .hold, .unhold, .mute,
            .unmute, .dtmf, .events:
            .keyOrPage
        case .listSessions: .keyOnly(what: "list every session")
        case .recordingFile: .keyOnly(what: "read recordings")
        case .merge: .keyOnly(what: "merge sessions")
        // A transfer dials (or lets the carrier dial) a number: the API key's to ask for.
        case .transfer, .acceptTransfer, .declineTransfer: .keyOnly(what: "transfer calls")
        // A stream connects wherever its URL says; a recording is the call's audio on disk.
        case .recording: .keyOnly(what: "control recordings")
        case .startStream: .keyOnly(what: "start media streams")
        case .stopStream: .keyOnly(what: "stop media streams")
        case .pageTokens: .keyOnly(what: "mint page tokens")
        case .adminReload: .keyOnly(what: "reload the configuration")
        case .metrics: .keyOnly(what: "read the metrics")
        }
    }
}

/// What a request's method and path name.
enum RouteMatch: Equatable {
    /// An endpoint, with the path's variables by name (`roomId`, `streamId`, `file`).
    case endpoint(ControlAPIEndpoint, [String: String])
    /// A path the API serves, but not with this method (405).
    case wrongMethod
    /// No such path (404).
    case none
}

/// The control API's routes (docs/openapi.yaml lists the same: a test compares them).
public enum ControlAPIRoutes {
    /// Every method and path template served.
    public static let all: [ControlAPIRoute] = ControlAPIEndpoint.allCases.flatMap { e in
        e.methods.map { ControlAPIRoute(method: $0, path: e.path) }
    }

    private static let templates: [(ControlAPIEndpoint, [Substring])] = ControlAPIEndpoint.allCases.map {
        ($0, $0.path.split(separator: "/"))
    }

    /// The endpoint `method` and `path` name. Segments are compared as decoded, empty ones
    /// ignored (`/v1//sessions/` is `/v1/sessions`); a variable takes one whole segment.
    static func match(method: String, path: String) -> RouteMatch {
        let segments = path.split(separator: "/")
        var pathFound = false
        for (endpoint, template) in templates where template.count == segments.count {
            var variables: [String: String] = [:]
            var fits = true
            for (t, s) in zip(template, segments) {
                if t.first == "{" && t.last == "}" {
                    variables[String(t.dropFirst().dropLast())] = String(s)
                } else if t != s {
                    fits = false
                    break
                }
            }
            guard fits else { continue }
            if endpoint.methods.contains(method) { return .endpoint(endpoint, variables) }
            pathFound = true
        }
        return pathFound ? .wrongMethod : .none
    }
}
