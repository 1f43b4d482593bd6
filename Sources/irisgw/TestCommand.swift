import CarrierTest
import Foundation
import IrisClient

/// `irisgw test`: runs a carrier test suite through a running gateway and judges the trunk.
/// Exit status 0 only when every test passed; 2 for a usage error or a bad suite file, 3 when
/// the gateway cannot be reached.
enum TestCommand {
    static let usage = """
        usage: irisgw test --profile NAME --suite FILE [--junit FILE] [--json FILE] [--html FILE]
                           [--evidence DIR] [--parallel N] [--api URL] [--ca-file FILE] [--data-dir DIR]

        Places the suite's test calls through the trunk profile NAME of the gateway at --api
        (default the local one; https:// is checked against --ca-file, default $IRISGW_CA_FILE,
        else the system store), one at a time (--parallel N: up to N at once, the reports still in
        the suite's order), and prints each test as it finishes. Suites are
        JSON5 (sip-profiles/suites/, docs/carrier-testing.md). --evidence DIR (or the suite's
        `evidence` key) keeps each call's capture and audio there: DIR/<test>-<n>.pcap (the trunk
        leg's SIP and RTP), DIR/<test>-<n>-carrier.wav and DIR/<test>-<n>-app.wav, linked from the
        reports.

        Load runs (`--load`, many calls at a rate; see `irisgw test --load --help`):
               irisgw test --load --profile NAME (--target NUMBER[,NUMBER...] | --suite FILE)
                           [--concurrent N] [--cps R] [--ramp-sec S] [--calls M | --duration-sec D]
                           [--hold-sec H] [--audio-every K] [--min-asr PCT] [--min-ner PCT] [--max-pdd-ms MS]
                           [--json FILE] [--html FILE] [--junit FILE]
        Monitoring (`--every`, the suite again and again, Prometheus metrics; `--every 1m --help`):
               irisgw test --profile NAME --suite FILE --every 30s|5m|1h [--metrics HOST:PORT]
                           [--reports DIR] [--keep N]

        """

    static func run(_ args: [String]) -> Int32 {
        // The other two modes: a load run, and a suite run again and again with its metrics.
        if args.contains("--load") { return LoadCommand.run(args) }
        if args.contains("--every") { return MonitorCommand.run(args) }
        var profile: String?, suitePath: String?, junit: String?, json: String?, html: String?, evidence: String?
        var parallel = 1
        var options = ClientOptions()
        var reader = ArgumentReader(args)
        do {
            while let option = reader.next() {
                // `--json FILE` here names the report; the other shared options still apply.
                if option != "--json", try options.parse(option, &reader) { continue }
                switch option {
                case "--profile": profile = try reader.value()
                case "--suite": suitePath = try reader.value()
                case "--junit": junit = try reader.value()
                case "--json": json = try reader.value()
                case "--html": html = try reader.value()
                case "--evidence": evidence = try reader.value()
                case "--parallel":
                    guard let n = Int(try reader.value()), (1...64).contains(n) else {
                        throw UsageError("--parallel is a number of calls from 1 to 64")
                    }
                    parallel = n
                case "-h", "--help":
                    writeOut(usage)
                    return 0
                default: throw UsageError("unknown option \(option)")
                }
            }
            guard let profile else { throw UsageError("--profile NAME is required") }
            guard let suitePath else { throw UsageError("--suite FILE is required") }
            let suite: TestSuite
            do { suite = try TestSuite.load(path: suitePath) } catch {
                writeError("irisgw test: \(error)\n")
                return 2
            }
            let connection = try options.connection()
            let start = Date()
            writeOut("suite \(suite.name): \(suite.tests.reduce(0) { $0 + $1.repeatCount }) calls through \(profile)\n")
            var runner = SuiteRunner(
                connection: connection, profile: profile, evidenceDirectory: evidence ?? suite.evidence
            ) {
                writeOut($0 + "\n")
            }
            runner.parallel = parallel
            let results = runner.run(suite)
            let failed = results.filter { !$0.passed }.count
            writeOut(
                String(
                    format: "%d passed, %d failed in %.1f s\n", results.count - failed, failed,
                    Date().timeIntervalSince(start)))
            for (path, text) in [
                (junit, Reports.junit(suite: suite.name, results)), (json, Reports.json(suite: suite.name, results)),
                (html, Reports.html(suite: suite.name, results, linksFrom: html.map(Self.folder)))
            ] {
                guard let path else { continue }
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
            return failed == 0 ? 0 : 1
        } catch {
            return TestCommand.failed(error, usage: usage)
        }
    }

    /// What every `irisgw test` mode does with an error it did not handle: a usage error is
    /// exit status 2 with the mode's usage, anything else (the gateway cannot be reached, a
    /// report cannot be written) is 3.
    static func failed(_ error: any Error, usage: String) -> Int32 {
        if let e = error as? UsageError {
            writeError("irisgw test: \(e)\n\n" + usage)
            return 2
        }
        writeError("irisgw test: \(error)\n")
        return 3
    }

    /// The folder a report file is written in (its links are made relative to it).
    static func folder(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path
    }
}
