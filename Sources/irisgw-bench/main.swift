import Foundation
import Glibc
import Media

/// `make bench`: each line is `BENCH <name> key=value...`, ratios measured in this run.
/// `irisgw-bench [NAME [ARGS] ...]` runs the default set or the benches named (`all`: every
/// one), each in a child process of its own (`--run-one NAME`) under the runner's deadline
/// (BenchRunner.swift; the benches in BenchTable.swift).
func formatted(_ v: Double) -> String { String(format: "%.0f", v) }

// Processes the benches start (docs/benchmarks.md, "`BENCH vs-rtpengine`"): the media
// server under test, the load generator, the whole-process floor.
if CommandLine.arguments.count >= 2 {
    let rest = Array(CommandLine.arguments.dropFirst(2))
    do {
        switch CommandLine.arguments[1] {
        case "media-server": try MediaServer.main(rest); exit(0)
        case "media-gen": try MediaLoadGenerator.main(rest); exit(0)
        case "whole-process-floor": try WholeProcessFloorBench.main(rest); exit(0)
        case "vs-rtpengine-step": try RTPEngineBench.oneStep(rest); exit(0)
        case "media-loadgen" where rest.count >= 3:
            try MediaBench.loadgen(
                listPath: rest[0], seconds: Double(rest[1]) ?? 3, platformCodec: rest[2],
                srtp: rest.count >= 4 ? SRTPSuite(rawValue: rest[3]) : nil)
            exit(0)
        default: break
        }
    } catch {
        FileHandle.standardError.write(Data("irisgw-bench \(CommandLine.arguments[1]): \(error)\n".utf8))
        exit(1)
    }
}

let words = Array(CommandLine.arguments.dropFirst())
if words.first == "--run-one" {
    // One bench, in the process group the runner made for it: lines go out as printed.
    guard words.count >= 2, let entry = BenchTable.entry(words[1]) else {
        FileHandle.standardError.write(Data("usage: irisgw-bench --run-one NAME [ARGS]\n".utf8))
        exit(2)
    }
    lineBufferStandardOutput()
    do {
        try entry.run(Array(words.dropFirst(2)))
        exit(0)
    } catch let why as BenchUnavailable {
        print(BenchLine(name: entry.name, skippedBecause: why.description).text)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("irisgw-bench \(entry.name): \(error)\n".utf8))
        exit(1)
    }
}

let picked: [(BenchEntry, [String])]
do {
    picked = try BenchTable.selection(words)
} catch {
    FileHandle.standardError.write(Data("irisgw-bench: \(error)\n".utf8))
    exit(2)
}
let runner = BenchRunner()
// SIGTERM / SIGINT (Ctrl-C, `timeout`, a CI job cancelled): the bench running is stopped with
// everything it started, the summary printed, and the runner exits 128 + the signal.
var stopSources: [DispatchSourceSignal] = []
for s in [SIGTERM, SIGINT, SIGHUP] {
    signal(s, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
    source.setEventHandler { runner.stopSignal.store(s, ordering: .relaxed) }
    source.resume()
    stopSources.append(source)
}
let started = Date()
for (entry, arguments) in picked {
    runner.run(entry, command: [RTPEngineBench.selfBinary, "--run-one", entry.name] + arguments)
}
for line in runner.summary(seconds: Date().timeIntervalSince(started)) { print(line) }
fflush(nil)
let stopped = runner.stopSignal.load(ordering: .relaxed)
exit(stopped != 0 ? 128 + stopped : runner.records.contains { $0.outcome == .crashed } ? 1 : 0)
