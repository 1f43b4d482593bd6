import Cluster
import ControlAPI
import Foundation
import Gateway

/// A node joining its cluster at start, before anything listens: the cluster's API key and
/// room-token secret (page tokens use the same secret) replace the node's own in its data
/// directory, so every node's `api-key` is the same file and a token minted on one node
/// verifies on all. The first node to join gives the cluster its own. Nothing is logged.
enum ClusterBootstrap {
    /// Why the node cannot join.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Makes the node and settles the secrets; the node then starts with the gateway.
    static func join(_ settings: ClusterSettings, dataDir: String) throws -> ClusterNode {
        let node: ClusterNode
        do { node = try ClusterNode(settings: settings) } catch {
            throw Failure(description: "cluster.redis: \(error)")
        }
        // The key may come from IRISGW_API_KEY, which creates nothing: the directory first.
        try PrivateFiles.prepareDirectory(dataDir)
        let key = try APIKey.loadOrCreate(dataDir: dataDir)
        _ = try RoomTokenSigner.loadOrCreate(dataDir: dataDir)
        let secretPath = dataDir + "/" + RoomTokenSigner.secretFileName
        let secret = (try String(contentsOfFile: secretPath, encoding: .utf8)).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let shared = try node.sharedSecretsWaiting(["apiKey": key, "roomTokenSecret": secret])
        if let clusterKey = shared["apiKey"], clusterKey != key {
            if let fromEnvironment = ProcessInfo.processInfo.environment["IRISGW_API_KEY"], !fromEnvironment.isEmpty {
                throw Failure(
                    description: "IRISGW_API_KEY is not the cluster's API key (unset it: the node takes the cluster's)")
            }
            try PrivateFiles.replace(dataDir + "/api-key", with: clusterKey + "\n")
        }
        if let clusterSecret = shared["roomTokenSecret"], clusterSecret != secret {
            try PrivateFiles.replace(secretPath, with: clusterSecret + "\n")
        }
        return node
    }
}
