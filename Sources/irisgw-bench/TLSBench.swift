import Foundation
import Glibc
import IOCore

/// `BENCH sip-tls`: the setup rate of sessions to a trunk over TLS against the same over TCP,
/// through the whole gateway (release `irisgw serve`), in one run with interleaved rounds so
/// machine load hits both alike. The carrier is SIPp over TCP, reached directly (TCP) or
/// through stunnel (TLS: stunnel ends the TLS and passes TCP on to a second SIPp). The
/// gateway reuses one connection per trunk each way, so the ratio is the cost of the
/// records (encryption, decryption), not of handshakes.
enum TLSBench {
    struct Result {
        var tcpRate = 0.0, tlsRate = 0.0
        var failed = 0
    }

    static func run(irisgw: String, sessions: Int = 300, rounds: Int = 3, workers: Int = 16) throws -> Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-tls-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (ca, cert, key) = try certificates(in: dir)

        // TCP listeners: ports free for TCP. (They were taken free for UDP, and a port an
        // earlier bench's TCP connection still held made SIPp or stunnel fail to listen; every
        // session then waited out its 10 s for Connected, about 10 minutes in all.)
        guard let tcpPort = CallRateBench.freePort(type: SOCK_STREAM),
            let behindPort = CallRateBench.freePort(type: SOCK_STREAM),
            let tlsPort = CallRateBench.freePort(type: SOCK_STREAM)
        else { throw SocketError("no free port") }
        let tcpCarrier = try carrier(
            port: tcpPort, contact: "<sip:carrier@127.0.0.1:\(tcpPort);transport=tcp>", dir: dir)
        defer { tcpCarrier.terminate(); tcpCarrier.waitUntilExit() }
        let tlsCarrier = try carrier(
            port: behindPort, contact: "<sip:carrier@127.0.0.1:\(tlsPort);transport=tls>", dir: dir)
        defer { tlsCarrier.terminate(); tlsCarrier.waitUntilExit() }
        let tunnel = try stunnel(accept: tlsPort, to: behindPort, cert: cert, key: key, dir: dir)
        defer { tunnel.terminate(); tunnel.waitUntilExit() }

        func profile(_ name: String, _ proxy: String, tls: String = "") -> String {
            """
            { name: "\(name)",
              outbound: { proxies: ["\(proxy)"], fromDomain: "bench.test", allowedPrefixes: ["+1"],
                          maxConcurrentCalls: 10000, callsPerSecond: 10000, ringTimeoutSec: 30 },
              media: { codecs: ["PCMU"], dtmf: "rfc4733", rtpTimeoutSec: 0 },
              sip: { transport: "tcp", prack: "supported", sessionTimerSec: 0, optionsPingSec: 0, \(tls) } }
            """
        }
        let gw = try BridgeBench.startGateway(
            irisgw: irisgw, carrierPort: tcpPort,
            profile: profile("bench", "sip:127.0.0.1:\(tcpPort);transport=tcp"),
            moreProfiles: [
                "tls": profile(
                    "tls", "sips:127.0.0.1:\(tlsPort)",
                    tls: "tls: { caFile: \"\(ca)\", serverName: \"carrier.bench.test\" }")
            ])
        defer { gw.stop() }
        let router = try BridgeBench.EventRouter(api: gw.api, key: gw.key)
        defer { router.close() }
        // Warm both connections before anything is timed; a trunk no session gets through
        // ends the bench here rather than after every round's sessions have failed.
        for profile in ["bench", "tls"] {
            let warm = BridgeBench.setupRate(gw, router, sessions: workers, workers: workers, profile: profile)
            guard warm.failed < workers else {
                throw SocketError("no session over the \(profile == "tls" ? "TLS" : "TCP") trunk connected", code: EIO)
            }
        }
        let rates = BridgeBench.interleavedRates(
            gw, router, profiles: ("bench", "tls"), sessions: sessions, workers: workers, rounds: rounds)
        return Result(tcpRate: rates.first, tlsRate: rates.second, failed: rates.failed)
    }

    /// A test CA and a certificate for `carrier.bench.test`, made with `openssl`.
    static func certificates(in dir: URL) throws -> (ca: String, cert: String, key: String) {
        let p = { (name: String) in dir.appendingPathComponent(name).path }
        let ext = p("ext.cnf")
        try "subjectAltName=DNS:carrier.bench.test\nbasicConstraints=CA:FALSE\n".write(
            toFile: ext, atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + ec + [
                "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=bench CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"
            ])
        try openssl(
            ["req", "-new"] + ec + [
                "-keyout", p("carrier.key"), "-out", p("carrier.csr"), "-subj", "/CN=carrier.bench.test"
            ])
        try openssl([
            "x509", "-req", "-in", p("carrier.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial",
            "-out", p("carrier.pem"), "-days", "2", "-extfile", ext
        ])
        return (p("ca.pem"), p("carrier.pem"), p("carrier.key"))
    }

    private static func openssl(_ args: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = args
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw SocketError("openssl \(args[0]) failed", code: EINVAL) }
    }

    /// SIPp answering every INVITE over TCP with `contact` (so in-dialog requests come back
    /// the way the INVITE came: straight, or through stunnel).
    static func carrier(port: Int, contact: String, dir: URL) throws -> Process {
        let xml = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="uas">
              <recv request="INVITE"/>
              <send><![CDATA[
            SIP/2.0 200 OK
            [last_Via:]
            [last_From:]
            [last_To:];tag=[pid]b[call_number]
            [last_Call-ID:]
            [last_CSeq:]
            Contact: \(contact)
            Content-Type: application/sdp
            Content-Length: [len]

            v=0
            o=bench 1 1 IN IP4 127.0.0.1
            s=-
            c=IN IP4 127.0.0.1
            t=0 0
            m=audio [media_port] RTP/AVP 0
            a=rtpmap:0 PCMU/8000

            ]]></send>
              <recv request="ACK"/>
              <recv request="BYE"/>
              <send><![CDATA[
            SIP/2.0 200 OK
            [last_Via:]
            [last_From:]
            [last_To:]
            [last_Call-ID:]
            [last_CSeq:]
            Content-Length: 0

            ]]></send>
            </scenario>

            """
        let file = dir.appendingPathComponent("uas-\(port).xml")
        try xml.write(to: file, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
        p.arguments = [
            "-sf", file.path, "-i", "127.0.0.1", "-p", String(port), "-t", "t1", "-nostdin",
            "-mp", String(CallRateBench.freeUDPPort() ?? 45_000), "-timeout", "600s"
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        try waitListening(p, port: port, label: "SIPp")
        return p
    }

    /// Returns once `p` takes TCP connections on 127.0.0.1:`port`; throws when it exits first
    /// or 10 s pass (it is then stopped).
    static func waitListening(_ p: Process, port: Int, label: String) throws {
        let end = EventLoop.now() + 10
        while EventLoop.now() < end && p.isRunning {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_addr.s_addr = inet_addr("127.0.0.1")
            sa.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return }
            usleep(50_000)
        }
        let exited = !p.isRunning
        if !exited { p.terminate() }
        p.waitUntilExit()
        throw SocketError("\(label) \(exited ? "exited" : "did not listen") on TCP port \(port)", code: EADDRINUSE)
    }

    /// stunnel taking TLS on `accept` and passing TCP to `to`.
    static func stunnel(accept: Int, to: Int, cert: String, key: String, dir: URL) throws -> Process {
        let conf = dir.appendingPathComponent("stunnel.conf")
        try """
        foreground = yes
        pid =
        syslog = no
        debug = warning
        [sip]
        accept = 127.0.0.1:\(accept)
        connect = 127.0.0.1:\(to)
        cert = \(cert)
        key = \(key)

        """.write(to: conf, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/stunnel4")
        p.arguments = [conf.path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        try waitListening(p, port: accept, label: "stunnel")
        return p
    }
}
