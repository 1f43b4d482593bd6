import CarrierTest
import ControlAPI
import Foundation
import IrisClient
import Synchronization

/// `irisgw test --every INTERVAL`: the suite now and then every interval until SIGTERM or
/// SIGINT, its results as Prometheus metrics (`--metrics HOST:PORT`) and its last N runs'
/// reports in a folder (docs/carrier-testing.md, "Monitoring"). Exit 0 after a signal, 2 for
/// a usage error or a bad suite file, 3 when the metrics address cannot be bound.
enum MonitorCommand {
    static let usage = """
        usage: irisgw test --profile NAME --suite FILE --every 30s|5m|1h [--metrics HOST:PORT]
                           [--reports DIR] [--keep N] [--api URL] [--ca-file FILE] [--data-dir DIR]

        Runs the suite now and then every INTERVAL (a whole number of s, m or h) until SIGTERM or
        SIGINT; the call in progress then finishes, no other starts, and the command exits 0.
        --metrics serves Prometheus text at http://HOST:PORT/metrics (port 0 picks one; the
        address is printed as `metrics on http://HOST:PORT/metrics`) and an index of the kept
        reports at /. Each run's HTML, JSON and JUnit reports go to --reports DIR (default
        ./irisgw-reports) as <yyyyMMddTHHmmssZ>-<suite>.html/.json/.xml; the newest --keep N
        runs (default 10) are kept.

        """

    static func run(_ args: [String]) -> Int32 {
        var profile: String?, suitePath: String?, interval: Double?, metricsListen: String?
        var reportsDir = "./irisgw-reports", keep = 10
        var options = ClientOptions()
        var reader = ArgumentReader(args)
        do {
            while let option = reader.next() {
                if try options.parse(option, &reader) { continue }
                switch option {
                case "--profile": profile = try reader.value()
                case "--suite": suitePath = try reader.value()
                case "--every":
                    let v = try reader.value()
                    guard let s = MonitorInterval.parse(v) else {
                        throw UsageError("--every needs an interval such as 30s, 5m or 1h (got \"\(v)\")")
                    }
                    interval = s
                case "--metrics": metricsListen = try reader.value()
                case "--reports": reportsDir = try reader.value()
                case "--keep":
                    guard let n = Int(try reader.value()), n >= 1 else {
                        throw UsageError("--keep needs a whole number of runs, 1 or more")
                    }
                    keep = n
                case "-h", "--help":
                    writeOut(usage)
                    return 0
                case "--junit", "--json", "--html":
                    throw UsageError("\(option) does not go with --every: the reports go to --reports DIR")
                default: throw UsageError("unknown option \(option)")
                }
            }
            guard let profile else { throw UsageError("--profile NAME is required") }
            guard let suitePath else { throw UsageError("--suite FILE is required") }
            guard let interval else { throw UsageError("--every INTERVAL is required") }
            let suite: TestSuite
            do { suite = try TestSuite.load(path: suitePath) } catch {
                writeError("irisgw test: \(error)\n")
                return 2
            }
            let connection = try options.connection()
            let metrics = MonitorMetrics(suite: suite.name)
            let archive = ReportArchive(directory: reportsDir, suite: suite.name, keep: keep)
            let stop = Atomic<Bool>(false)
            let wake = DispatchSemaphore(value: 0)
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
                let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                s.setEventHandler {
                    if !stop.exchange(true, ordering: .relaxed) {
                        writeOut("stopping: the call in progress finishes, no other starts\n")
                    }
                    wake.signal()
                }
                s.resume()
                return s
            }
            defer { sources.forEach { $0.cancel() } }
            var server: HTTPServer?
            if let metricsListen {
                let s = HTTPServer(
                    configuration: HTTPServerConfiguration(
                        listen: metricsListen, threads: 2, maxBodyBytes: 0,
                        maxHeaderBytes: 8192, maxConnections: 64),
                    handler: { handle($0, metrics: metrics, archive: archive) },
                    webSocket: { _ in .refuse(.text(404, "not found\n")) },
                    onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
                let port: Int
                do { port = try s.start() } catch {
                    writeError("irisgw test: cannot serve metrics on \(metricsListen): \(error)\n")
                    return 3
                }
                server = s
                let host =
                    metricsListen.hasPrefix("[")
                    ? String(metricsListen[...metricsListen.firstIndex(of: "]")!])
                    : String(metricsListen.split(separator: ":").first ?? "127.0.0.1")
                writeOut("metrics on http://\(host):\(port)/metrics\n")
            }
            defer { server?.stop() }
            let runner = SuiteRunner(connection: connection, profile: profile) { writeOut($0 + "\n") }
            let calls = suite.tests.reduce(0) { $0 + $1.repeatCount }
            writeOut(
                String(
                    format: "suite %@: %d calls through %@ every %@\n", suite.name, calls, profile, describe(interval)))
            var next = Date()
            while !stop.load(ordering: .relaxed) {
                let start = Date()
                next = max(next.addingTimeInterval(interval), start)
                guard let results = runner.run(suite, shouldStop: { stop.load(ordering: .relaxed) }) else { break }
                let duration = (Date().timeIntervalSince(start) * 10).rounded() / 10
                let failed = results.filter { !$0.passed }.count
                // The files first: a scraper that sees the run counted finds its reports.
                do {
                    try archive.save(
                        startedAt: start, html: Reports.html(suite: suite.name, results),
                        json: Reports.json(suite: suite.name, results), junit: Reports.junit(suite: suite.name, results)
                    )
                } catch {
                    writeError("irisgw test: cannot write the reports to \(reportsDir): \(error)\n")
                }
                metrics.record(startedAt: start.timeIntervalSince1970, durationSec: duration, results: results)
                writeOut(
                    String(
                        format: "run %d: %d passed, %d failed in %.1f s\n", metrics.runs, results.count - failed,
                        failed, duration))
                // Until the next run, or a signal.
                while !stop.load(ordering: .relaxed) && Date() < next {
                    _ = wake.wait(timeout: .now() + next.timeIntervalSinceNow)
                }
            }
            writeOut("stopped after \(metrics.runs) runs\n")
            return 0
        } catch {
            return TestCommand.failed(error, usage: usage)
        }
    }

    static func describe(_ seconds: Double) -> String {
        if seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return "\(Int(seconds))s"
    }

    /// GET /metrics, GET / (the kept reports), GET /reports/NAME; 404 for the rest.
    static func handle(_ request: HTTPRequest, metrics: MonitorMetrics, archive: ReportArchive) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPResponse(
                status: 405, headers: [("Allow", "GET"), ("Content-Type", "text/plain")],
                body: Array("method not allowed\n".utf8))
        }
        if request.path == "/metrics" {
            return .text(200, metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        if request.path == "/" {
            var page =
                "<!doctype html><html><head><meta charset=\"utf-8\"><title>irisgw test: \(Reports.xml(metrics.suite))</title></head>"
            page += "<body style=\"font:14px system-ui,sans-serif;margin:2em\"><h1>\(Reports.xml(metrics.suite))</h1>"
            page += "<p>\(metrics.runs) runs; <a href=\"/metrics\">metrics</a></p><ul>"
            for run in archive.runs() {
                page +=
                    "<li>\(run.stamp): "
                    + run.files.map { "<a href=\"/reports/\($0)\">\($0.split(separator: ".").last ?? "")</a>" }
                    .joined(separator: " ") + "</li>"
            }
            return .text(200, page + "</ul></body></html>\n", contentType: "text/html; charset=utf-8")
        }
        if request.path.hasPrefix("/reports/") {
            let name = String(request.path.dropFirst("/reports/".count))
            if archive.isReport(name), let data = FileManager.default.contents(atPath: archive.directory + "/" + name) {
                let type =
                    name.hasSuffix(".html")
                    ? "text/html; charset=utf-8" : name.hasSuffix(".json") ? "application/json" : "application/xml"
                return HTTPResponse(status: 200, headers: [("Content-Type", type)], body: Array(data))
            }
        }
        return .text(404, "not found\n")
    }
}
