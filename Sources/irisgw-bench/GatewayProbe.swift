import Foundation
import Glibc
import WebClient

/// What the flood and soak benches read about a running gateway: /proc figures of its
/// process and its `/metrics`, both from outside, as an operator would.
enum GatewayProbe {
    /// Resident set (KiB) of `pid`, from /proc/PID/status.
    static func rssKiB(_ pid: Int32) -> Int { statusField(pid, "VmRSS:") ?? 0 }

    /// Threads of `pid`.
    static func threads(_ pid: Int32) -> Int { statusField(pid, "Threads:") ?? 0 }

    /// Open file descriptors of `pid`.
    static func fds(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    private static func statusField(_ pid: Int32, _ name: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// One thread of a process: its name, CPU seconds, and seconds it waited runnable for a
    /// CPU (/proc/PID/task/TID/schedstat: run time, run-queue wait, timeslices).
    struct ThreadTimes {
        var tid: Int
        var name: String
        var cpu: Double
        var runQueueWait: Double
    }

    static func threadTimes(_ pid: Int32) -> [ThreadTimes] {
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [] }
        return tids.compactMap { t -> ThreadTimes? in
            guard let tid = Int(t),
                let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/comm", encoding: .utf8),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/schedstat", encoding: .utf8)
            else { return nil }
            let f = stat.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard f.count >= 2 else { return nil }
            return ThreadTimes(
                tid: tid, name: name.trimmingCharacters(in: .whitespacesAndNewlines), cpu: f[0] / 1e9,
                runQueueWait: f[1] / 1e9)
        }
    }

    /// Busy and total jiffies of the whole machine (/proc/stat's cpu line), for how loaded
    /// it was while a bench ran.
    static func machineJiffies() -> (busy: Double, total: Double) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return (0, 0) }
        let v = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard v.count >= 5 else { return (0, 0) }
        let total = v.reduce(0, +)
        return (total - v[3] - v[4], total)  // idle and iowait are not busy
    }

    /// The 1-minute load average.
    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return 0 }
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    /// CPU seconds (user + system) of `pid` and all its threads.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Datagrams the kernel dropped on the UDP socket bound to 127.0.0.1:`port` (its receive
    /// buffer was full), from /proc/net/udp.
    static func udpDrops(port: Int) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else { return 0 }
        let local = String(format: "0100007F:%04X", port)
        for line in text.split(separator: "\n").dropFirst() {
            let f = line.split(separator: " ")
            if f.count > 12, f[1] == local { return Int(f[f.count - 1]) ?? 0 }
        }
        return 0
    }

    /// `/metrics` as sample name (with labels) to value; nil when it did not answer.
    static func metrics(_ client: HTTPClient) -> [String: Double]? {
        guard let r = try? client.request(method: "GET", path: "/metrics", timeout: 5), r.status == 200 else {
            return nil
        }
        var out: [String: Double] = [:]
        for line in String(decoding: r.body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else {
                continue
            }
            out[String(line[..<space])] = v
        }
        return out
    }

    /// Every `irisgw_refused_total` label with its count.
    static func refusals(_ m: [String: Double]) -> [String: Int] {
        var out: [String: Int] = [:]
        let prefix = "irisgw_refused_total{what=\""
        for (k, v) in m where k.hasPrefix(prefix) { out[String(k.dropFirst(prefix.count).dropLast(2))] = Int(v) }
        return out
    }

    /// The sum of every sample of metric `name` (all its labels).
    static func sum(_ m: [String: Double], _ name: String) -> Double {
        m.filter { $0.key == name || $0.key.hasPrefix(name + "{") }.values.reduce(0, +)
    }

    /// The `p` quantile (0...1) of `values`, 0 for none.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1)
        return sorted[min(sorted.count - 1, rank)]
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` seconds pass; whether it held.
    static func waitFor(timeout: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }
}
