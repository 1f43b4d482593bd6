import CarrierSim
import Foundation
import SIP
import Synchronization

/// `irisgw carrier-sim`: the built-in carrier simulator (serves the test numbers of
/// docs/carrier-testing.md), and `irisgw carrier-sim call`: PSTN calls into the gateway.
enum CarrierSimCommand {
    static let usage = """
        usage: irisgw carrier-sim [--listen HOST:PORT] [--media-host HOST] [--password PW] [--time-scale X]
                                  [--loss PCT] [--jitter MS]
               irisgw carrier-sim call DID --from CALLER [--to HOST:PORT] [--local-host HOST]
                                      [--hangup-after S] [--calls N --rate R] [--tone HZ]

        The first form plays a PSTN carrier on HOST:PORT (default 127.0.0.1:5090, UDP and TCP):
        prints `listening sip udp|tcp HOST:PORT` and `ready`, then one line per call (number,
        behaviour, outcome) until SIGINT or SIGTERM. Port 0 picks a free port. --password is
        the digest password of number +15550100012 (default carrier-sim, or $CARRIER_SIM_PASSWORD).
        --time-scale multiplies every script delay. --loss (0-100, default 5) and --jitter (0-1000
        ms, default 40) set how the lossy number +15550100023 mangles its echo.

        The second places calls into the gateway (default 127.0.0.1:5060): PCMU with a tone
        (default 300 Hz) plus an echo of what it hears, from --local-host (SIP and RTP; default
        127.0.0.1: another address of lo, such as 127.0.0.2, keeps it apart from nodes behind
        Kamailio). One line per call and a summary; exit 0 only when every call was answered
        and ended normally.

        """

    static func run(_ args: [String]) -> Int32 {
        if args.first == "call" { return runCall(Array(args.dropFirst())) }
        var config = CarrierSimulator.Configuration()
        if let pw = ProcessInfo.processInfo.environment["CARRIER_SIM_PASSWORD"], !pw.isEmpty {
            config.authPassword = pw
        }
        var reader = ArgumentReader(args)
        do {
            while let a = reader.next() {
                switch a {
                case "--listen":
                    guard let addr = SocketAddress.parse(try reader.value(), defaultPort: 5090) else {
                        throw UsageError("--listen needs HOST:PORT")
                    }
                    config.listen = addr
                case "--media-host": config.mediaHost = try reader.value()
                case "--password": config.authPassword = try reader.value()
                case "--time-scale":
                    guard let x = Double(try reader.value()), x > 0 else {
                        throw UsageError("--time-scale needs a positive number")
                    }
                    config.timeScale = x
                case "--loss":
                    guard let pct = Double(try reader.value()), pct.isFinite, (0...100).contains(pct) else {
                        throw UsageError("--loss needs a percentage from 0 to 100")
                    }
                    config.lossPercent = pct
                case "--jitter":
                    guard let ms = Double(try reader.value()), ms.isFinite, (0...1000).contains(ms) else {
                        throw UsageError("--jitter needs milliseconds from 0 to 1000")
                    }
                    config.jitterMs = ms
                case "-h", "--help":
                    print(usage, terminator: "")
                    return 0
                default: throw UsageError("unknown option \(a)")
                }
            }
        } catch {
            return fail("\(error)")
        }
        let simulator: CarrierSimulator
        do {
            simulator = try CarrierSimulator(configuration: config)
            simulator.onReport = { writeOut("call \($0)\n") }
            for p in try simulator.start() {
                writeOut("listening sip \(p.transport.rawValue.lowercased()) \(p.address)\n")
            }
        } catch {
            writeError("irisgw carrier-sim: cannot start: \(error)\n")
            return 1
        }
        writeOut("ready\n")
        waitForTermination()
        simulator.shutdown()
        return 0
    }

    private static func runCall(_ args: [String]) -> Int32 {
        var did: String?
        var from: String?
        var gateway = SocketAddress(host: "127.0.0.1", port: 5060)
        var hangupAfter: Double?
        var calls = 1
        var rate = 1.0
        var tone = 300.0
        var localHost: String?
        var reader = ArgumentReader(args)
        do {
            while let a = reader.next() {
                switch a {
                case "--from": from = try reader.value()
                case "--to":
                    guard let addr = SocketAddress.parse(try reader.value(), defaultPort: 5060) else {
                        throw UsageError("--to needs HOST:PORT")
                    }
                    gateway = addr
                case "--local-host":
                    let host = try reader.value()
                    guard SocketAddress.isNumericHost(host) else {
                        throw UsageError("--local-host needs a numeric address")
                    }
                    localHost = host
                case "--hangup-after": hangupAfter = try reader.seconds()
                case "--calls":
                    guard let n = Int(try reader.value()), n > 0 else {
                        throw UsageError("--calls needs a positive count")
                    }
                    calls = n
                case "--rate":
                    guard let r = Double(try reader.value()), r > 0 else {
                        throw UsageError("--rate needs calls per second")
                    }
                    rate = r
                case "--tone":
                    guard let hz = Double(try reader.value()), (20...3900).contains(hz) else {
                        throw UsageError("--tone needs 20-3900 Hz")
                    }
                    tone = hz
                case "-h", "--help":
                    print(usage, terminator: "")
                    return 0
                default:
                    guard !a.hasPrefix("-"), did == nil else { throw UsageError("unknown argument \(a)") }
                    did = a
                }
            }
            guard did != nil else { throw UsageError("call needs a DID") }
            guard from != nil else { throw UsageError("call needs --from CALLER") }
        } catch {
            return fail("\(error)")
        }
        var config = PSTNCaller.Configuration(did: did!, from: from!)
        config.gateway = gateway
        config.hangupAfter = hangupAfter
        config.calls = calls
        config.rate = rate
        config.toneHz = tone
        if let localHost { config.localHost = localHost }
        let outcomes: [PSTNCaller.Outcome]
        do {
            let caller = try PSTNCaller(configuration: config)
            let interrupted = Atomic<Bool>(false)
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
                let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                s.setEventHandler {
                    interrupted.store(true, ordering: .relaxed)
                    caller.hangupAll()
                }
                s.resume()
                return s
            }
            defer { sources.forEach { $0.cancel() } }
            outcomes = try caller.run { writeOut("\($0)\n") }
        } catch {
            writeError("irisgw carrier-sim call: \(error)\n")
            return 1
        }
        let ok = outcomes.filter(\.isSuccess).count
        let answered = outcomes.filter { $0.answeredAfter != nil }.count
        writeOut(
            "summary: \(outcomes.count) calls, \(answered) answered, \(ok) ended normally, \(outcomes.count - ok) failed\n"
        )
        return ok == outcomes.count ? 0 : 1
    }

    private static func fail(_ message: String) -> Int32 {
        writeError("irisgw carrier-sim: \(message)\n\n" + usage)
        return 2
    }
}
