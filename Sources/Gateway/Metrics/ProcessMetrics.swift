import Formats
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The process's own CPU time and resident memory for `/metrics`, under the names the
/// Prometheus client libraries use (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`), read from /proc/self/stat and /proc/self/statm.
public struct ProcessMetrics: Sendable, Equatable {
    /// User plus system CPU seconds of every thread.
    public var cpuSeconds: Double
    public var residentBytes: Int

    public init(cpuSeconds: Double, residentBytes: Int) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
    }

    /// The current figures; nil where /proc cannot be read (not Linux).
    public static func current() -> ProcessMetrics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        else { return nil }
        return parse(
            stat: stat, statm: statm, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
            pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// From the texts of /proc/PID/stat (utime and stime, fields 14 and 15, in clock ticks;
    /// the name in parentheses may hold spaces) and /proc/PID/statm (resident pages, field 2).
    public static func parse(stat: String, statm: String, ticksPerSecond: Double, pageSize: Int) -> ProcessMetrics? {
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        // After the name: state (field 3) is the first, so utime (14) is the 12th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let pages = statm.split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]),
            pages.count > 1, let resident = Int(pages[1])
        else { return nil }
        return ProcessMetrics(cpuSeconds: (user + system) / ticksPerSecond, residentBytes: resident * pageSize)
    }

    /// The two families as Prometheus text.
    public func render(into out: inout PrometheusText) {
        out.metric(
            "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
            [(labels: "", value: String((cpuSeconds * 100).rounded() / 100))])
        out.metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", residentBytes)
    }
}
