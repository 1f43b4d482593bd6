import Foundation
import Glibc
import SIP

/// Two test hosts on a wire of their own: network namespaces `gateway` and `carrier` made
/// by the test, joined by a veth pair whose both ends stay inside them (10.77.N.1 and
/// 10.77.N.2). nftables inside a namespace plays the bad network: random loss on input, or a
/// carrier that vanishes. `close()` stops what it started and deletes both namespaces (and
/// with them the veth). Needs root and iproute2 + nftables (`make deps` installs them).
final class TestNetwork: @unchecked Sendable {
    enum Host: String { case gateway = "g", carrier = "c" }

    let id: String
    let subnet: Int
    private var processes: [Process] = []
    private let lock = NSLock()

    init() throws {
        id = "ig" + String(UInt32.random(in: 0..<0xFFFFFF), radix: 16)
        subnet = Int.random(in: 1...250)
        do {
            for host in [Host.gateway, .carrier] {
                try Self.ip("netns", "add", name(host))
                try Self.ip("-n", name(host), "link", "set", "lo", "up")
            }
            try Self.ip("link", "add", id + "g", "netns", name(.gateway), "type", "veth", "peer", "name", id + "c", "netns", name(.carrier))
            for host in [Host.gateway, .carrier] {
                try Self.ip("-n", name(host), "addr", "add", "\(address(host))/24", "dev", id + host.rawValue)
                try Self.ip("-n", name(host), "link", "set", id + host.rawValue, "up")
            }
        } catch {
            close()
            throw error
        }
    }

    func name(_ host: Host) -> String { id + "-" + (host == .gateway ? "gw" : "carrier") }
    func address(_ host: Host) -> String { "10.77.\(subnet).\(host == .gateway ? 1 : 2)" }

    /// Drops `percent` of the UDP packets arriving at `host` over `interface` (SIP and RTP
    /// alike), at random: nftables `numgen random` on the input hook (there is no netem here).
    func loseUDP(percent: Int, on host: Host, interface: String) throws {
        try nft(host, "add table inet loss")
        try nft(host, "add chain inet loss input { type filter hook input priority 0 ; }")
        try nft(host, "add rule inet loss input iifname \"\(interface)\" meta l4proto udp numgen random mod 100 < \(percent) drop")
    }

    /// `host` vanishes from the wire: everything it would receive is dropped.
    func blackhole(_ host: Host) throws {
        try nft(host, "add table inet gone")
        try nft(host, "add chain inet gone input { type filter hook input priority 0 ; policy drop ; }")
    }

    /// Starts `arguments` inside `host`; stopped by `close()` unless stopped before.
    func start(on host: Host, _ arguments: [String], output: Pipe) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        p.arguments = ["netns", "exec", name(host)] + arguments
        p.standardOutput = output
        p.standardError = output
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["IRISGW_API_KEY"] = nil
        p.environment = env
        try p.run()
        lock.withLock { processes.append(p) }
        return p
    }

    func close() {
        for p in lock.withLock({ processes }) where p.isRunning {
            p.interrupt()
            let deadline = Date().addingTimeInterval(8)
            while p.isRunning && Date() < deadline { usleep(20_000) }
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
        }
        for host in [Host.gateway, .carrier] { try? Self.ip("netns", "del", name(host)) }
    }

    private func nft(_ host: Host, _ command: String) throws {
        try Self.run("/usr/sbin/ip", ["netns", "exec", name(host), "nft", command])
    }

    private static func ip(_ arguments: String...) throws { try run("/usr/sbin/ip", arguments) }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw SocketError("\(tool) \(arguments.joined(separator: " ")): \(text)", code: EINVAL)
        }
    }
}
