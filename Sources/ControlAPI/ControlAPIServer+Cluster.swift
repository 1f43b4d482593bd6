import Cluster
import Dispatch
import Foundation
import Gateway
import IrisAPI
import Synchronization
import WebClient

/// One API on every node of a cluster (docs/api.md, "Clusters"): a request for a session
/// another node holds is served there, a new session is placed on the least loaded node,
/// and the session list is the cluster's. Runs on the server's workers, which may wait
/// (they are no event loop); the exchanges themselves run on WebClient's loop.
extension ControlAPIServer {
    /// Seconds a forwarded request may take, from connect to the whole answer.
    static let forwardTimeout = 10.0
    /// Seconds a peer has to list its sessions for `GET /v1/sessions`.
    static let listTimeout = 5.0

    /// The answer of another node when the request is for it; nil when this node serves it
    /// (no cluster, a request another node forwarded, a session held here or nowhere).
    /// `room`: the session the endpoint's path names.
    func clusterRoute(
        _ request: HTTPRequest, _ caller: APICaller, _ endpoint: ControlAPIEndpoint, room: String?, gateway: Gateway
    ) throws(GatewayError) -> HTTPResponse? {
        guard let cluster = gateway.cluster else { return nil }
        if let mark = request.headers[ForwardedMark.header.lowercased()] {
            // Signed by a node: answered here, whatever it asks (the loop guard).
            _ = try ForwardedMark.verify(
                mark, method: request.method, target: ForwardedMark.target(path: request.path, query: request.query),
                now: Int64(Date().timeIntervalSince1970), key: gateway.tokens.nodeForwardingKey)
            return nil
        }
        switch endpoint {
        case .createSession:
            return place(request, cluster: cluster, gateway: gateway)
        case .listSessions:
            guard caller == .apiKey else { return nil }
            return list(request, cluster: cluster, gateway: gateway)
        default:
            guard let room, !gateway.holds(roomId: room) else { return nil }
            switch cluster.holderWaiting(of: room) {
            case .here, .none:
                return nil
            case .unavailable:
                throw .unavailable(
                    "the cluster's Redis cannot be reached: the node holding session \(room) cannot be found")
            case .node(let holder):
                switch forward(request, to: [holder], gateway: gateway, timeout: Self.forwardTimeout)[0] {
                case .success(let answer): return answer
                case .failure(let why):
                    throw .unavailable("node \(holder.id) holds session \(room) but did not answer: \(why)")
                }
            }
        }
    }

    /// createWithTN in a cluster: placed by `Placement` on this node (nil: served here) or
    /// forwarded to the chosen one; a node that does not answer is passed over for the next
    /// choice, and when none is left this node takes it.
    private func place(_ request: HTTPRequest, cluster: ClusterNode, gateway: Gateway) -> HTTPResponse? {
        let (me, seen) = cluster.membersWaiting()
        guard let me else { return nil }
        var peers = seen
        while let chosen = Placement.choose(me: me, peers: peers), chosen.id != me.id {
            if case .success(let answer) = forward(
                request, to: [chosen], gateway: gateway, timeout: Self.forwardTimeout)[0]
            {
                return answer
            }
            peers.removeAll { $0.id == chosen.id }
        }
        return nil
    }

    /// `GET /v1/sessions` in a cluster: this node's sessions and every live peer's (asked
    /// at once, each for its own), by room id. A peer that does not answer is left out and
    /// named in `X-Irisgw-Partial`.
    private func list(_ request: HTTPRequest, cluster: ClusterNode, gateway: Gateway) -> HTTPResponse {
        let peers = cluster.membersWaiting().peers
        var sessions = gateway.list()
        var missing: [String] = []
        for (peer, answer) in zip(peers, forward(request, to: peers, gateway: gateway, timeout: Self.listTimeout)) {
            guard case .success(let r) = answer, r.status == 200,
                let theirs = try? JSONDecoder().decode(SessionList.self, from: Data(r.body))
            else {
                missing.append(peer.id)
                continue
            }
            sessions += theirs.sessions
        }
        var response = Self.json(200, SessionList(sessions: sessions.sorted { $0.roomId < $1.roomId }))
        if !missing.isEmpty { response.headers.append(("X-Irisgw-Partial", missing.sorted().joined(separator: ","))) }
        return response
    }

    /// Sends `request` as it came (method, path, query, body, the caller's Authorization) to
    /// each of `nodes` at once, marked as forwarded by this node, and waits (a worker, never
    /// a loop) for every answer: status, body and header fields as the node gave them, or
    /// why it did not answer.
    func forward(
        _ request: HTTPRequest, to nodes: [NodeRecord], gateway: Gateway, timeout: Double
    ) -> [Result<HTTPResponse, IrisTransportError>] {
        guard let cluster = gateway.cluster, !nodes.isEmpty else { return [] }
        let target = ForwardedMark.target(path: request.path, query: request.query)
        let mark = ForwardedMark(nodeId: cluster.settings.nodeId, time: Int64(Date().timeIntervalSince1970))
        var headers = [
            ForwardedMark.header: mark.value(
                method: request.method, target: target, key: gateway.tokens.nodeForwardingKey)
        ]
        for name in ["authorization", "content-type", "accept"] {
            if let value = request.headers[name] { headers[name] = value }
        }
        let body = request.body.isEmpty ? nil : request.body
        let answers = Mutex([Result<HTTPResponse, IrisTransportError>?](repeating: nil, count: nodes.count))
        let done = DispatchGroup()
        for (i, node) in nodes.enumerated() {
            done.enter()
            let deliver: @Sendable (Result<HTTPResponse, IrisTransportError>) -> Void = { answer in
                answers.withLock { $0[i] = answer }
                done.leave()
            }
            do throws(IrisTransportError) {
                try HTTPClient(baseURL: node.api).request(
                    method: request.method, path: target, headers: headers, body: body, timeout: timeout
                ) { result in deliver(result.map(Self.relayed)) }
            } catch {
                deliver(.failure(error))
            }
        }
        // The client loop ends each exchange by its deadline; the margin only guards a stuck loop.
        _ = done.wait(timeout: .now() + timeout + 5)
        return answers.withLock { $0 }.map {
            $0 ?? .failure(.timeout(operation: "\(request.method) \(target) on another node", seconds: timeout))
        }
    }

    /// A node's answer as this node gives it: everything but the fields of the connection
    /// it came on (the server sets its own).
    private static func relayed(_ r: (status: Int, headers: [String: String], body: [UInt8])) -> HTTPResponse {
        let hopByHop: Set = ["connection", "content-length", "transfer-encoding", "date", "keep-alive"]
        return HTTPResponse(
            status: r.status, headers: r.headers.filter { !hopByHop.contains($0.key) }.sorted { $0.key < $1.key },
            body: r.body)
    }
}
