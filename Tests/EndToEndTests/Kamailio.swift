import Foundation
import Glibc
import SIP
import TestSupport
import Testing

/// One Kamailio running the repository's `cluster/kamailio.cfg` in front of gateway nodes,
/// for a test: its dispatcher list (set 1: `nodes`), ctl socket and output in a temporary
/// folder, UDP and TCP on one port the OS picked, on `host` (127.0.0.x: keep carriers and
/// nodes on other addresses, since the cfg tells a node from a carrier by address alone).
/// `stop()` (in a `defer`) ends it and removes the folder.
final class Kamailio: @unchecked Sendable {
    static let path = "/usr/sbin/kamailio"
    static let kamcmd = "/usr/sbin/kamcmd"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }
    /// The repository's configuration.
    static let configuration: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("cluster/kamailio.cfg").path

    let host: String
    let port: Int
    let directory: URL
    private let process: ChildProcess

    /// Starts Kamailio and waits until it answers OPTIONS. `port`: its SIP port (default: a
    /// free one, from the OS); `probeSec`: seconds between probe rounds; `frMs`: how long a
    /// node has to answer an INVITE or a probe.
    init(
        nodes: [SIPPeer], host: String = "127.0.0.1", port: Int? = nil, probeSec: Int = 1, frMs: Int = 1000
    ) async throws {
        self.host = host
        self.port = try port ?? freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-kamailio-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let list = directory.appendingPathComponent("dispatcher.list")
        try Self.dispatcherList(nodes).write(to: list, atomically: true, encoding: .utf8)
        let defines = [
            "LISTEN_IP=\"\(host)\"", "SIP_PORT=\(self.port)", "DISPATCHER_LIST=\"\(list.path)\"",
            "CTL_SOCKET=\"unix:\(directory.path)/ctl\"", "RPC_FIFO=\"\(directory.path)/rpc.fifo\"",
            "PING_FROM=\"sip:kamailio@\(host)\"", "PROBE_SEC=\(probeSec)", "FR_MS=\(frMs)", "CHILDREN=2"
        ]
        process = try ChildProcess(
            Self.path,
            ["-f", Self.configuration, "-DD", "-E", "-m", "64", "-M", "8", "-Y", directory.path]
                + defines.flatMap { ["-A", $0] },
            outputFile: directory.appendingPathComponent("output.txt"), unblockingSignals: true)
        let probe = try UDPProbe()
        let options = Array(
            """
            OPTIONS sip:\(host):\(port) SIP/2.0\r
            Via: SIP/2.0/UDP 127.0.0.1:\(probe.port);branch=z9hG4bK-ready-\(UUID().uuidString.prefix(8))\r
            From: <sip:test@127.0.0.1>;tag=ready\r
            To: <sip:\(host):\(port)>\r
            Call-ID: ready-\(UUID().uuidString)\r
            CSeq: 1 OPTIONS\r
            Max-Forwards: 70\r
            Content-Length: 0\r
            \r

            """.utf8)
        let answered = await eventually(timeout: 15, pollInterval: 0.1) { [process] in
            guard process.isRunning else { return true }
            probe.send(options, to: self.port, host: host)
            return await probe.receive(timeout: 0.2).map { $0.starts(with: Array("SIP/2.0 200".utf8)) } ?? false
        }
        guard answered, process.isRunning else {
            let output = process.output
            stop()
            throw SocketError("kamailio did not start: \(output.suffix(3000))", code: EINVAL)
        }
    }

    /// The dispatcher list for `nodes`: set 1, active, named node1, node2 ...
    static func dispatcherList(_ nodes: [SIPPeer]) -> String {
        nodes.enumerated().map { i, node in
            "1 sip:\(node.address);transport=\(node.transport.rawValue.lowercased()) 0 0 duid=node\(i + 1)\n"
        }.joined()
    }

    /// Where carriers and nodes reach it.
    func peer(_ transport: SIPTransportProtocol = .udp) -> SIPPeer {
        SIPPeer(transport: transport, address: SocketAddress(host: host, port: port))
    }

    /// The URI a node's `sip.edgeProxy` names.
    var uri: String { "sip:\(host):\(port)" }

    /// What `kamcmd dispatcher.list` says of each node: its URI and flags (`AP`: active and
    /// probing; `IP`: inactive; `TP`: trying).
    func dispatcherState() async throws -> [(uri: String, flags: String)] {
        let r = try await ChildProcess.run(
            Self.kamcmd, ["-s", "unix:\(directory.path)/ctl", "dispatcher.list"], timeout: 10)
        var out: [(String, String)] = []
        var uri: String?
        for line in r.output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("URI: ") { uri = String(line.dropFirst(5)) }
            if line.hasPrefix("FLAGS: "), let u = uri {
                out.append((u, String(line.dropFirst(7))))
                uri = nil
            }
        }
        return out
    }

    /// Waits until Kamailio holds the node on `port` active (`up`) or inactive; true when it did.
    func waitForNode(port: Int, up: Bool, timeout: Double = 20) async -> Bool {
        await eventually(timeout: timeout, pollInterval: 0.2) {
            let state = (try? await dispatcherState()) ?? []
            guard let node = state.first(where: { $0.uri.contains(":\(port);") || $0.uri.hasSuffix(":\(port)") })
            else { return false }
            return node.flags.hasPrefix("A") == up
        }
    }

    /// Everything it printed so far.
    var output: String { process.output }

    /// SIGTERM, SIGKILL a second later (without waiting); removes the folder unless
    /// IRISGW_E2E_KEEP is set.
    func stop() {
        process.stop(grace: 1)
        if ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
