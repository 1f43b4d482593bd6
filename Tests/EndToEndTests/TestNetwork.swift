import Foundation
import Glibc
import SIP
import TestSupport
import Testing

/// Test hosts on wires of their own: network namespaces made by the test, joined by veth
/// pairs whose both ends stay inside them.
///
/// - Plain: `gateway` (10.77.N.1) and `carrier` (10.77.N.2) on one wire.
/// - NAT (`nat: true`): `gateway` on a private wire (10.78.N.1) to `router` (10.78.N.254),
///   which joins a public wire (198.18.N.254) where `carrier` is (198.18.N.2). The router
///   is a 1:1 NAT: the gateway's public address 198.18.N.10 is forwarded to 10.78.N.1
///   (DNAT) and the gateway's traffic leaves from it (SNAT). The carrier has no route to the
///   private wire: it can reach the gateway only at the public address.
///
/// nftables inside a namespace plays the bad network: random loss on input, or a carrier
/// that vanishes. `close()` stops what it started and deletes every namespace (and with them
/// the veths). Needs root and iproute2 + nftables (`make deps` installs them).
final class TestNetwork: @unchecked Sendable {
    enum Host: String, CaseIterable { case gateway = "g", carrier = "c", router = "r" }

    let id: String
    let subnet: Int
    let nat: Bool
    private var processes: [ChildProcess] = []
    private let lock = NSLock()

    init(nat: Bool = false) async throws {
        id = "ig" + String(UInt32.random(in: 0..<0xFFFFFF), radix: 16)
        subnet = Int.random(in: 1...250)
        self.nat = nat
        do {
            for host in hosts {
                try await Self.ip("netns", "add", name(host))
                try await Self.ip("-n", name(host), "link", "set", "lo", "up")
            }
            if nat {
                // gateway <-> router (private), router <-> carrier (public).
                try await wire(.gateway, address(.gateway), .router, "10.78.\(subnet).254", prefix: "p")
                try await wire(.carrier, address(.carrier), .router, "198.18.\(subnet).254", prefix: "q")
                try await Self.ip("-n", name(.router), "addr", "add", "\(publicAddress)/32", "dev", id + "qr")
                try await Self.ip("-n", name(.gateway), "route", "add", "default", "via", "10.78.\(subnet).254")
                try await Self.run(
                    "/usr/sbin/ip", ["netns", "exec", name(.router), "sysctl", "-qw", "net.ipv4.ip_forward=1"])
                try await nft(.router, "add table ip nat")
                try await nft(.router, "add chain ip nat pre { type nat hook prerouting priority -100 ; }")
                try await nft(.router, "add chain ip nat post { type nat hook postrouting priority 100 ; }")
                try await nft(.router, "add rule ip nat pre ip daddr \(publicAddress) dnat to \(address(.gateway))")
                try await nft(
                    .router,
                    "add rule ip nat post ip saddr \(address(.gateway)) oifname \"\(id)qr\" snat to \(publicAddress)")
            } else {
                try await wire(.gateway, address(.gateway), .carrier, address(.carrier), prefix: "")
            }
        } catch {
            close()
            throw error
        }
    }

    /// Namespaces, veths and nftables need root (CI is root) and iproute2 + nftables; where
    /// they cannot be made, the suites that need them say so and skip.
    static let canMakeNamespaces =
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
        && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft")
    static let namespacesNeeded: Comment = "needs root with iproute2 and nftables (network namespaces made by the test)"

    var hosts: [Host] { nat ? [.gateway, .router, .carrier] : [.gateway, .carrier] }

    func name(_ host: Host) -> String {
        id + "-" + (host == .gateway ? "gw" : host == .carrier ? "carrier" : "router")
    }

    func address(_ host: Host) -> String {
        switch (nat, host) {
        case (false, .gateway): "10.77.\(subnet).1"
        case (false, _): "10.77.\(subnet).2"
        case (true, .gateway): "10.78.\(subnet).1"
        case (true, .carrier): "198.18.\(subnet).2"
        case (true, .router): "198.18.\(subnet).254"
        }
    }

    /// The gateway's address on the public wire (NAT only): what the carrier reaches.
    var publicAddress: String { "198.18.\(subnet).10" }

    /// The interface of `host` on its wire toward the other (the name loss rules take).
    func interface(_ host: Host) -> String {
        id + (nat && host != .router ? (host == .gateway ? "pg" : "qc") : host.rawValue)
    }

    /// A veth between `a` and `b`, each end inside its namespace, addressed /24.
    private func wire(_ a: Host, _ aAddress: String, _ b: Host, _ bAddress: String, prefix: String) async throws {
        let (aEnd, bEnd) = (id + prefix + a.rawValue, id + prefix + b.rawValue)
        try await Self.ip("link", "add", aEnd, "netns", name(a), "type", "veth", "peer", "name", bEnd, "netns", name(b))
        for (host, end, address) in [(a, aEnd, aAddress), (b, bEnd, bAddress)] {
            try await Self.ip("-n", name(host), "addr", "add", "\(address)/24", "dev", end)
            try await Self.ip("-n", name(host), "link", "set", end, "up")
        }
    }

    /// Drops `percent` of the UDP packets arriving at `host` over `interface` (SIP and RTP
    /// alike), at random: nftables `numgen random` on the input hook (there is no netem here).
    func loseUDP(percent: Int, on host: Host, interface: String) async throws {
        try await nft(host, "add table inet loss")
        try await nft(host, "add chain inet loss input { type filter hook input priority 0 ; }")
        try await nft(
            host,
            "add rule inet loss input iifname \"\(interface)\" meta l4proto udp numgen random mod 100 < \(percent) drop"
        )
    }

    /// `host` vanishes from the wire: everything it would receive is dropped.
    func blackhole(_ host: Host) async throws {
        try await nft(host, "add table inet gone")
        try await nft(host, "add chain inet gone input { type filter hook input priority 0 ; policy drop ; }")
    }

    /// Starts `arguments` inside `host` (its output in the child's file); stopped by
    /// `close()` unless stopped before.
    func start(on host: Host, _ arguments: [String]) throws -> ChildProcess {
        var env = ProcessInfo.processInfo.environment
        env["IRISGW_API_KEY"] = nil
        let p = try ChildProcess("/usr/sbin/ip", ["netns", "exec", name(host)] + arguments, environment: env)
        lock.withLock { processes.append(p) }
        return p
    }

    /// Stops what it started (SIGINT, SIGKILL after 8 s) and waits for every exit: a gateway
    /// has then completed its call records.
    func stopProcesses() async {
        for p in lock.withLock({ processes }) { await p.stopped(signal: SIGINT, grace: 8) }
    }

    /// Stops what it started (SIGINT, SIGKILL after 8 s) and deletes the namespaces, without
    /// waiting: an unstructured task runs `ip netns del` (a process inside a deleted
    /// namespace goes on in it until it exits).
    func close() {
        for p in lock.withLock({ processes }) { p.stop(signal: SIGINT, grace: 8) }
        let names = hosts.map(name)
        Task.detached {
            for n in names { try? await Self.ip("netns", "del", n) }
        }
    }

    /// True when something in `host` has bound UDP `udpPort` (read with `ss` inside it).
    func isListening(on host: Host, udpPort: Int) async -> Bool {
        guard
            let r = try? await ChildProcess.run(
                "/usr/sbin/ip", ["netns", "exec", name(host), "ss", "-Hlun", "sport = :\(udpPort)"],
                discardingErrors: true, timeout: 10)
        else { return false }
        return r.status == 0 && !r.output.isEmpty
    }

    private func nft(_ host: Host, _ command: String) async throws {
        try await Self.run("/usr/sbin/ip", ["netns", "exec", name(host), "nft", command])
    }

    private static func ip(_ arguments: String...) async throws { try await run("/usr/sbin/ip", arguments) }

    private static func run(_ tool: String, _ arguments: [String]) async throws {
        let r = try await ChildProcess.run(tool, arguments, timeout: 30)
        guard r.status == 0 else {
            throw SocketError("\(tool) \(arguments.joined(separator: " ")): \(r.output)", code: EINVAL)
        }
    }
}
