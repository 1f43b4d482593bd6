import Foundation
import Glibc
import IOCore
import SIP

/// `BENCH sip-transactions`: what one request costs the SIP loop with few transactions open
/// against the same with tens of thousands open, in one run: the transaction layer's cost per
/// request must not grow with what it holds (issue 26: a trusted flood keeps thousands open
/// until Timer H).
///
/// A `SIPUserAgent` in this process (defence off, T1 so long that no timer fires during the
/// run) rejects every INVITE with 486 and answers OPTIONS itself; the bench fills it with
/// INVITEs it never ACKs (each transaction stays open), then sends measured rounds of
/// INVITE + ACK and OPTIONS over loopback and reads the SIP loop thread's CPU time around them.
enum TransactionScalingBench {
    struct Result {
        var open: Int
        var microsecondsPerRequest: Double
        /// The process's resident memory with the large table full.
        var rssKiB: Int
    }

    static func run(small: Int = 100, large: Int = 40_000, measured: Int = 6_000) throws -> String {
        let a = try measure(open: small, measured: measured)
        let b = try measure(open: large, measured: measured)
        let again = try measure(open: small, measured: measured)
        // The small case before and after the large one, so drifting machine load hits both.
        let base = (a.microsecondsPerRequest + again.microsecondsPerRequest) / 2
        let ratio = b.microsecondsPerRequest / base
        return "BENCH sip-transactions open_small=\(small) open_large=\(large) requests=\(measured)"
            + " us_per_request_small=\(String(format: "%.2f", base)) us_per_request_large=\(String(format: "%.2f", b.microsecondsPerRequest))"
            + " us_small_before=\(String(format: "%.2f", a.microsecondsPerRequest)) us_small_after=\(String(format: "%.2f", again.microsecondsPerRequest))"
            + " rss_kib_large=\(b.rssKiB) ratio=\(String(format: "%.2f", ratio)) target_ratio_max=1.25 pass=\(ratio <= 1.25)"
    }

    struct ScalingError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    final class Rejecter: SIPUserAgentDelegate {
        func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) { call.reject(status: 486) }
    }

    /// Opens `open` INVITE server transactions, then times `measured` requests (half INVITE
    /// with its ACK, half OPTIONS) on the SIP loop's thread.
    static func measure(open: Int, measured: Int) throws -> Result {
        var c = SIPUserAgentConfiguration(listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))])
        c.defence = .testPeer
        // No retransmission or Timer H while we measure: every transaction stays as it is.
        c.t1 = 3600
        c.t2 = 3600
        c.t4 = 3600
        let ua = try SIPUserAgent(configuration: c)
        let rejecter = Rejecter()
        ua.delegate = rejecter
        let bound = try ua.start()
        defer { ua.shutdown() }
        let client = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 16 << 20)
        guard let to = RawSocketAddress(bound[0].address) else { throw ScalingError("no address") }
        let port = client.local.port

        var next = 0
        func request(_ method: String) -> (Int, [UInt8]) {
            let n = next
            next += 1
            return (
                n,
                Array(
                    """
                    \(method) sip:+15550001000@127.0.0.1 SIP/2.0\r
                    Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bK-scale-\(n)\r
                    From: <sip:+15550009999@127.0.0.1>;tag=f\(n)\r
                    To: <sip:+15550001000@127.0.0.1>\r
                    Call-ID: scale-\(n)@127.0.0.1\r
                    CSeq: 1 \(method)\r
                    Max-Forwards: 70\r
                    Contact: <sip:+15550009999@127.0.0.1:\(port)>\r
                    Content-Length: 0\r
                    \r

                    """.utf8)
            )
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = RawSocketAddress()
        /// Sends `batch` and waits until each request has its final response (10 s at most). A
        /// request the agent shed (its loop counted itself behind the socket: the bench sends
        /// the next batch the moment the last answer leaves, while the agent is still reading)
        /// is sent again after 50 ms without an answer, as a UAC retransmits after T1.
        func exchange(_ batch: [(Int, [UInt8])]) throws {
            var waiting = Dictionary(uniqueKeysWithValues: batch)
            for (_, b) in batch { _ = b.withUnsafeBytes { client.send($0, to: to) } }
            let deadline = EventLoop.now() + 10
            var lastProgress = EventLoop.now()
            while !waiting.isEmpty {
                let now = EventLoop.now()
                guard now < deadline else {
                    throw ScalingError("\(waiting.count) of \(batch.count) requests unanswered in 10 s")
                }
                if now - lastProgress > 0.05 {
                    for b in waiting.values { _ = b.withUnsafeBytes { client.send($0, to: to) } }
                    lastProgress = now
                }
                guard let n = buffer.withUnsafeMutableBytes({ client.receive(into: $0, from: &from) }) else {
                    usleep(200)
                    continue
                }
                // "SIP/2.0 1xx" is provisional; every other status is a final answer, matched by
                // the number in its Call-ID ("scale-N@").
                guard n > 8, buffer[8] != UInt8(ascii: "1"), let index = Self.callNumber(buffer[0..<n]) else {
                    continue
                }
                if waiting.removeValue(forKey: index) != nil { lastProgress = EventLoop.now() }
            }
        }
        // Fill: INVITEs never ACKed. Every batch stays under the 64 datagrams at which the agent
        // counts itself behind its socket and sheds new requests (docs/operations.md).
        var left = open
        while left > 0 {
            let k = min(48, left)
            try exchange((0..<k).map { _ in request("INVITE") })
            left -= k
        }
        func loopCPU() -> Double {
            ua.loop.sync {
                var ts = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
                return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
            }
        }
        let start = loopCPU()
        var done = 0
        while done < measured {
            var batch: [(Int, [UInt8])] = []
            for _ in 0..<12 {
                batch.append(request("OPTIONS"))
                batch.append(request("INVITE"))
            }
            try exchange(batch)
            // The ACKs of this batch's INVITEs (OPTIONS took the even numbers, INVITEs the odd).
            let acks = (0..<12).map { i in ackFor(index: next - 24 + 2 * i + 1, port: port) }
            for a in acks { _ = a.withUnsafeBytes { client.send($0, to: to) } }
            done += 24
        }
        let cpu = loopCPU() - start
        return Result(
            open: open, microsecondsPerRequest: cpu / Double(measured) * 1e6, rssKiB: GatewayProbe.rssKiB(getpid()))
    }

    /// N of the "Call-ID: scale-N@" in a response.
    static func callNumber(_ bytes: ArraySlice<UInt8>) -> Int? {
        let marker = Array("Call-ID: scale-".utf8)
        guard let at = bytes.firstRange(of: marker) else { return nil }
        var n = 0
        var i = at.upperBound
        while i < bytes.endIndex, (0x30...0x39).contains(bytes[i]) {
            n = n * 10 + Int(bytes[i] - 0x30)
            i += 1
        }
        return i > at.upperBound ? n : nil
    }

    /// The ACK for the INVITE numbered `index`: it matches the INVITE's server transaction by
    /// its branch (RFC 3261 §17.2.3), whatever To tag the answer carried.
    static func ackFor(index: Int, port: Int) -> [UInt8] {
        Array(
            """
            ACK sip:+15550001000@127.0.0.1 SIP/2.0\r
            Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bK-scale-\(index)\r
            From: <sip:+15550009999@127.0.0.1>;tag=f\(index)\r
            To: <sip:+15550001000@127.0.0.1>;tag=t\r
            Call-ID: scale-\(index)@127.0.0.1\r
            CSeq: 1 ACK\r
            Max-Forwards: 70\r
            Content-Length: 0\r
            \r

            """.utf8)
    }
}
