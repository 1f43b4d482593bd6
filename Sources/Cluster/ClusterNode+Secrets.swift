import Foundation
import IOCore
import Redis

/// The cluster's secrets (the API key, the room-token and page-token secrets): the first
/// node to join writes its own, every later one takes them, so a key or a token works on
/// every node. Never logged.
extension ClusterNode {
    /// Writes each of `local` where the cluster has none yet and returns the cluster's.
    /// For the main thread at start (not an event loop): tries for up to `timeout` seconds
    /// while Redis comes up, then fails.
    public func sharedSecretsWaiting(
        _ local: [String: String], timeout: Double = 10
    ) throws(ClusterStartError)
        -> [String: String]
    {
        let deadline = EventLoop.now() + timeout
        loop.start(name: "irisgw-cluster")
        while true {
            let got: [String: String]?? = waiting { done in
                loop.execute { [self] in
                    for (field, value) in local.sorted(by: { $0.key < $1.key }) {
                        redis.send(["HSETNX", .init(keys.secrets), .init(field), .init(value)]) { _ in }
                    }
                    redis.send(["HGETALL", .init(keys.secrets)]) { result in
                        guard case .success(let value) = result else { return done(nil) }
                        done(
                            Dictionary(Self.pairs(value).map { ($0.0, String(decoding: $0.1, as: UTF8.self)) }) {
                                a, _ in a
                            })
                    }
                }
            }
            if let secrets = got ?? nil, Set(local.keys).isSubset(of: secrets.keys) { return secrets }
            guard EventLoop.now() < deadline else {
                throw ClusterStartError(
                    "cannot reach the cluster's Redis at \(redis.endpoint.address) within \(Int(timeout)) s "
                        + "(a node needs the cluster's secrets to start)")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

/// Why a node could not join its cluster at start.
public struct ClusterStartError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
