import Foundation
import SIP
import Synchronization

/// `irisgw sip-endpoint`: the bare SIP answering endpoint (signalling only), for SIPp
/// scenarios, carrier checks and the call-setup benchmark.
enum SIPEndpointCommand {
    static let usage = """
        usage: irisgw sip-endpoint [--listen udp:HOST:PORT]... [--listen tcp:HOST:PORT]...
                                   [--answer-after S] [--hangup-after S] [--reject CODE] [--no-ring]
                                   [--codecs PCMU,PCMA] [--prack disabled|supported|required]
                                   [--session-timer SEC|off]

        Prints one line `listening <udp|tcp> HOST:PORT` per socket (port 0 picks a free one),
        then answers calls until SIGINT or SIGTERM; prints a JSON summary on exit.

        """

    static func run(_ args: [String]) -> Int32 {
        var listen: [(transport: SIPTransportProtocol, address: SocketAddress)] = []
        var behaviour = AnsweringEndpoint.Behaviour()
        var prack = SIPUserAgentConfiguration.PRACKPolicy.supported
        var timer: SessionTimerPolicy? = SessionTimerPolicy()
        var i = 0
        func value() -> String? {
            i += 1
            return i < args.count ? args[i] : nil
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "--listen":
                guard let v = value(), let (t, addr) = parseListen(v) else {
                    return fail("--listen needs udp:HOST:PORT or tcp:HOST:PORT")
                }
                listen.append((t, addr))
            case "--answer-after":
                guard let v = value().flatMap(Double.init) else { return fail("--answer-after needs seconds") }
                behaviour.answerAfter = v
            case "--hangup-after":
                guard let v = value().flatMap(Double.init) else { return fail("--hangup-after needs seconds") }
                behaviour.hangupAfter = v
            case "--reject":
                guard let v = value().flatMap(Int.init), (300...699).contains(v) else {
                    return fail("--reject needs a status 300-699")
                }
                behaviour.rejectStatus = v
            case "--no-ring":
                behaviour.ring = false
            case "--codecs":
                guard let v = value() else { return fail("--codecs needs a list") }
                behaviour.codecs = v.split(separator: ",").map { String($0).uppercased() }
            case "--prack":
                guard let v = value().flatMap(SIPUserAgentConfiguration.PRACKPolicy.init(rawValue:)) else {
                    return fail("--prack needs disabled, supported or required")
                }
                prack = v
            case "--session-timer":
                guard let v = value() else { return fail("--session-timer needs seconds or off") }
                if v == "off" {
                    timer = nil
                } else if let s = Int(v), s >= 90 {
                    timer = SessionTimerPolicy(sessionExpires: s)
                } else {
                    return fail("--session-timer needs seconds (>= 90) or off")
                }
            case "-h", "--help":
                print(usage, terminator: "")
                return 0
            default:
                return fail("unknown option \(a)")
            }
            i += 1
        }
        if listen.isEmpty { listen = [(.udp, SocketAddress(host: "127.0.0.1", port: 5070))] }
        var config = SIPUserAgentConfiguration(listen: listen, prack: prack, sessionTimer: timer)
        // A test endpoint (`BENCH sip-calls` drives it past 1,000 calls a second from one source).
        config.defence = .testPeer
        let ua: SIPUserAgent
        let bound: [SIPPeer]
        do {
            ua = try SIPUserAgent(configuration: config)
            bound = try ua.start()
        } catch {
            return fail("cannot start: \(error)")
        }
        let chosen = behaviour
        let endpoint = ua.loop.sync { AnsweringEndpoint(ua: ua, behaviour: chosen) }
        for p in bound { writeOut("listening \(p.transport.rawValue.lowercased()) \(p.address)\n") }
        waitForTermination()
        let stats = ua.loop.sync { endpoint.stats }
        ua.shutdown()
        let summary: [String: Any] = [
            "received": stats.received, "connected": stats.connected, "ended": stats.ended,
            "endings": stats.endings
        ]
        if let data = try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
        }
        return 0
    }

    static func parseListen(_ text: String) -> (SIPTransportProtocol, SocketAddress)? {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let t = SIPTransportProtocol(rawValue: parts[0].uppercased()),
            let addr = SocketAddress.parse(String(parts[1]))
        else { return nil }
        return (t, addr)
    }

    private static func fail(_ message: String) -> Int32 {
        writeError("irisgw sip-endpoint: \(message)\n\n" + usage)
        return 2
    }
}

/// Blocks until SIGINT or SIGTERM; returns which.
@discardableResult
func waitForTermination() -> Int32 {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let done = DispatchSemaphore(value: 0)
    let received = Mutex<Int32>(0)
    let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
        let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        s.setEventHandler {
            received.withLock { $0 = sig }
            done.signal()
        }
        s.resume()
        return s
    }
    done.wait()
    sources.forEach { $0.cancel() }
    return received.withLock { $0 }
}
