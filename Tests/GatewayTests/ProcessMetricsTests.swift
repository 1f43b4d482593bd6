import Gateway
import Testing

@Suite struct ProcessMetricsTests {
    /// A /proc/PID/stat line whose name holds a space and a parenthesis: utime 250 and
    /// stime 50 ticks at 100 per second are 3 s; 1234 resident pages of 4 KiB.
    @Test func parsesStatAndStatm() {
        let stat =
            "4242 (irisgw (x) y) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 50 0 0 20 0 12 0 100 500000000 1234 18446744073709551615"
        let m = ProcessMetrics.parse(
            stat: stat, statm: "125000 1234 500 100 0 2000 0\n", ticksPerSecond: 100, pageSize: 4096)
        #expect(m == ProcessMetrics(cpuSeconds: 3, residentBytes: 1234 * 4096))
        #expect(ProcessMetrics.parse(stat: "garbage", statm: "1 2", ticksPerSecond: 100, pageSize: 4096) == nil)
    }

    /// `/metrics` carries both families, read from this very process.
    @Test func metricsTextHasProcessFamilies() throws {
        let text = GatewayMetrics().render(statuses: [], sipResponses: [:])
        #expect(text.contains("# TYPE process_cpu_seconds_total counter"))
        let rss = try #require(text.split(separator: "\n").first { $0.hasPrefix("process_resident_memory_bytes ") })
        #expect((Int(rss.split(separator: " ")[1]) ?? 0) > 1_000_000, "\(rss)")
        let cpu = try #require(text.split(separator: "\n").first { $0.hasPrefix("process_cpu_seconds_total ") })
        #expect(Double(cpu.split(separator: " ")[1]) != nil, "\(cpu)")
    }
}
