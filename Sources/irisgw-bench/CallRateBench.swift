import Foundation
import SIP

/// The call setup rate SIPp reaches against `irisgw sip-endpoint` before more than 0.1% of
/// calls fail: SIPp's built-in `uac` (INVITE, 100, 180, 200, ACK, BYE, 200) at rising rates.
enum CallRateBench {
    struct Step {
        var rate: Int
        var calls: Int
        var failed: Int
        /// The call rate SIPp itself reports over the run (its cumulative "Call Rate").
        var achieved: Double
    }

    static func run(
        irisgw: String, rates: [Int] = [100, 200, 400, 600, 800, 1000, 1500, 2000, 3000], secondsPerStep: Int = 5
    ) -> [Step] {
        var steps: [Step] = []
        for rate in rates {
            // A fresh endpoint per step: transactions of the previous step (non-INVITE server
            // transactions live 32 s on UDP) must not weigh on this one.
            guard
                let step = withEndpoint(irisgw, { port in sipp(port: port, rate: rate, calls: rate * secondsPerStep) })
                    ?? nil
            else { break }
            steps.append(step)
            // More than 0.1% failed, or the rate reached stopped rising: stop climbing.
            if Double(step.failed) > Double(step.calls) * 0.001 { break }
            if steps.count >= 2, step.achieved < steps[steps.count - 2].achieved * 1.05 { break }
        }
        return steps
    }

    /// Runs `body` with the UDP port of a fresh `irisgw sip-endpoint`, stopped afterwards.
    private static func withEndpoint<T>(_ irisgw: String, _ body: (Int) -> T) -> T? {
        let endpoint = Process()
        endpoint.executableURL = URL(fileURLWithPath: irisgw)
        endpoint.arguments = ["sip-endpoint", "--listen", "udp:127.0.0.1:0", "--session-timer", "off"]
        let out = Pipe()
        endpoint.standardOutput = out
        endpoint.standardError = FileHandle.nullDevice
        guard (try? endpoint.run()) != nil else { return nil }
        defer {
            endpoint.interrupt()
            endpoint.waitUntilExit()
        }
        guard let line = readLine(out.fileHandleForReading),
            let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else { return nil }
        return body(port)
    }

    private static func sipp(port: Int, rate: Int, calls: Int) -> Step? {
        guard let localPort = freeUDPPort() else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
        p.arguments = [
            "-sn", "uac", "127.0.0.1:\(port)", "-i", "127.0.0.1", "-p", String(localPort), "-r", String(rate),
            "-m", String(calls), "-l", String(rate * 4), "-nostdin", "-timeout", String(calls / rate + 30),
            "-timeout_error"
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let ok = cumulative(text, "Successful call") ?? 0
        let failed = cumulative(text, "Failed call") ?? calls
        let achieved = Double(cumulativeText(text, "Call Rate")?.split(separator: " ").first ?? "") ?? 0
        return Step(rate: rate, calls: ok + failed, failed: failed + max(0, calls - ok - failed), achieved: achieved)
    }

    /// The cumulative column of a SIPp statistics row (`  Successful call | 12 | 340 `).
    private static func cumulative(_ text: String, _ row: String) -> Int? {
        cumulativeText(text, row).flatMap { Int($0) }
    }

    private static func cumulativeText(_ text: String, _ row: String) -> String? {
        for line in text.split(separator: "\n").reversed() where line.contains(row) {
            if let last = line.split(separator: "|").last { return last.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    private static func readLine(_ h: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while let byte = try? h.read(upToCount: 1), let b = byte.first {
            if b == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(b)
        }
        return nil
    }

    /// A UDP port the OS reports free right now (SIPp must be told its port).
    static func freeUDPPort() -> Int? { freePort(type: SOCK_DGRAM) }

    /// A port of `type` (`SOCK_DGRAM`, `SOCK_STREAM`) on 127.0.0.1 the OS reports free right now.
    static func freePort(type: __socket_type) -> Int? {
        let fd = socket(AF_INET, Int32(type.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        sa.sin_port = 0
        let bound = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { return nil }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return Int(UInt16(bigEndian: sa.sin_port))
    }
}
