import CarrierTest
import Foundation
import IrisClient

/// `irisgw test --load`: calls at a rate through the gateway, one report of the whole run
/// (docs/carrier-testing.md, "Load runs"). Exit 0 when every threshold given held (and every
/// audio check passed), 1 when one broke, 2 for a usage error or a bad suite file, 3 when
/// the gateway cannot be reached.
enum LoadCommand {
    static let usage = """
        usage: irisgw test --load --profile NAME (--target NUMBER[,NUMBER...] | --suite FILE)
                           [--concurrent N] [--cps R] [--ramp-sec S] [--calls M | --duration-sec D]
                           [--hold-sec H] [--audio-every K] [--answer-timeout-sec S] [--source NUMBER]
                           [--min-asr PCT] [--min-ner PCT] [--max-pdd-ms MS]
                           [--json FILE] [--html FILE] [--junit FILE] [--api URL] [--ca-file FILE] [--data-dir DIR]

        Starts calls at up to R per second (rising from 1 cps over --ramp-sec), never more than N
        at once; each is answered, held H seconds and hung up, and every K-th checks that its
        tone comes back (an echoing number). Targets are dialled in turn. --suite FILE takes the
        plan from the file's `load` section; flags given win over it. Defaults: 10 at once, 1 cps,
        no ramp, 100 calls, hold 5 s, no audio checks, answer timeout 30 s, no thresholds.
        Prints a summary line; the reports plot the run and the gateway's own load.

        """

    static func run(_ args: [String]) -> Int32 {
        var profile: String?, suitePath: String?, junit: String?, json: String?, html: String?
        var options = ClientOptions()
        var reader = ArgumentReader(args)
        var flags: [(inout LoadPlan) -> Void] = []
        var targets: [String] = []
        func number(_ r: inout ArgumentReader, _ option: String, _ range: ClosedRange<Double>) throws -> Double {
            guard let v = Double(try r.value()), range.contains(v) else {
                throw UsageError("\(option) needs a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return v
        }
        func whole(_ r: inout ArgumentReader, _ option: String, _ range: ClosedRange<Int>) throws -> Int {
            guard let v = Int(try r.value()), range.contains(v) else {
                throw UsageError("\(option) needs a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return v
        }
        do {
            while let option = reader.next() {
                if option != "--json", try options.parse(option, &reader) { continue }
                switch option {
                case "--load": break
                case "--profile": profile = try reader.value()
                case "--suite": suitePath = try reader.value()
                case "--junit": junit = try reader.value()
                case "--json": json = try reader.value()
                case "--html": html = try reader.value()
                case "--target":
                    let list = try reader.value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    guard !list.isEmpty, list.allSatisfy({ !$0.isEmpty }) else {
                        throw UsageError("--target needs a number")
                    }
                    targets += list
                case "--source":
                    let v = try reader.value()
                    flags.append { $0.source = v }
                case "--concurrent":
                    let v = try whole(&reader, option, 1...10_000)
                    flags.append { $0.concurrent = v }
                case "--cps":
                    let v = try number(&reader, option, 0.01...1000)
                    flags.append { $0.cps = v }
                case "--ramp-sec":
                    let v = try number(&reader, option, 0...86_400)
                    flags.append { $0.rampSec = v }
                case "--calls":
                    let v = try whole(&reader, option, 1...10_000_000)
                    flags.append {
                        $0.calls = v; $0.durationSec = nil
                    }
                case "--duration-sec":
                    let v = try number(&reader, option, 1...604_800)
                    flags.append {
                        $0.durationSec = v; $0.calls = nil
                    }
                case "--hold-sec":
                    let v = try number(&reader, option, 0...86_400)
                    flags.append { $0.holdSec = v }
                case "--audio-every":
                    let v = try whole(&reader, option, 0...10_000_000)
                    flags.append { $0.audioEvery = v }
                case "--answer-timeout-sec":
                    let v = try number(&reader, option, 1...600)
                    flags.append { $0.answerTimeoutSec = v }
                case "--min-asr":
                    let v = try number(&reader, option, 0...100)
                    flags.append { $0.minASR = v }
                case "--min-ner":
                    let v = try number(&reader, option, 0...100)
                    flags.append { $0.minNER = v }
                case "--max-pdd-ms":
                    let v = try whole(&reader, option, 1...600_000)
                    flags.append { $0.maxPostDialDelayMs = v }
                case "-h", "--help":
                    writeOut(usage)
                    return 0
                default: throw UsageError("unknown option \(option)")
                }
            }
            if args.filter({ $0 == "--calls" || $0 == "--duration-sec" }).count > 1 {
                throw UsageError("give --calls or --duration-sec, not both")
            }
            guard let profile else { throw UsageError("--profile NAME is required") }
            var plan = LoadPlan()
            var name = "load"
            if let suitePath {
                do { (name, plan) = try LoadSuite.load(path: suitePath) } catch {
                    writeError("irisgw test: \(error)\n")
                    return 2
                }
            }
            for f in flags { f(&plan) }
            if !targets.isEmpty { plan.targets = targets }
            if let problem = plan.problem {
                throw UsageError(problem + " (--target NUMBER, or a suite's load section)")
            }
            let connection = try options.connection()
            // The gateway must answer before any call is placed.
            do { _ = try connection.sessions() } catch {
                writeError("irisgw test: the gateway at \(options.api) cannot be reached: \(error)\n")
                return 3
            }
            let limit = plan.callLimit.map { "\($0) calls" } ?? String(format: "%.0f s of calls", plan.durationSec ?? 0)
            writeOut(
                "load \(name): \(limit) through \(profile) to \(plan.targets.joined(separator: ", ")), up to \(plan.concurrent) at once, "
                    + String(format: "%g cps", plan.cps)
                    + (plan.rampSec > 0 ? String(format: " after a %g s ramp", plan.rampSec) : "")
                    + String(format: ", hold %g s", plan.holdSec) + "\n")
            let runner = LoadRunner(connection: connection, profile: profile, plan: plan, name: name) {
                writeOut($0 + "\n")
            }
            // Ctrl-C or SIGTERM: no new calls; those in progress end and the reports are written.
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
                let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                s.setEventHandler { runner.stop() }
                s.resume()
                return s
            }
            defer { sources.forEach { $0.cancel() } }
            let result = runner.run()
            writeOut(result.summaryLine + "\n" + result.summary.gatewayVerdict + "\n")
            for b in result.summary.broken { writeOut("✘ \(b)\n") }
            for (path, text) in [
                (junit, LoadReport.junit(result, plan: plan)), (json, LoadReport.json(result)),
                (html, LoadReport.html(result))
            ] {
                guard let path else { continue }
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
            return result.summary.broken.isEmpty ? 0 : 1
        } catch {
            return TestCommand.failed(error, usage: usage)
        }
    }
}
