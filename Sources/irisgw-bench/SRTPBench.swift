import Foundation
import Glibc
import Media

/// `BENCH srtp` / `BENCH srtp-gcm`: `BENCH media`'s 100 transcoded calls on one media thread
/// with SRTP on every trunk leg, against the same calls in plain RTP, each pair of steps
/// alternated in this run (drifting machine load hits both alike). A step's cost is the media
/// thread's CPU per packet it processed (`MediaBench.Step.cpuPerPacketUs`), so a generator
/// starved by a busy machine (fewer packets) does not read as a cheaper engine. The ratio is
/// plain cost / SRTP cost, the median of the rounds', so one step a neighbour's build lands on
/// does not decide it; the rounds' ratios are printed to show the spread. Beside it, what the
/// crypto costs alone: a protect and an unprotect of a 172-byte PCMU packet (the trunk leg's
/// work per call-frame, of two packets processed), CPU ns, and the ratio that alone would give.
enum SRTPBench {
    static let calls = 100, rounds = 5, seconds = 3.0, aim = 0.9

    struct Comparison {
        var plain: [Double] = []
        var srtp: [Double] = []
        var last: MediaBench.Step?
        /// Per round: plain cost / SRTP cost (1 = free, 0.9 = SRTP 11 % dearer).
        var ratios: [Double] { zip(plain, srtp).map { $1 > 0 ? $0 / $1 : 0 } }
    }

    static func compare(suite: SRTPSuite) throws -> Comparison {
        var c = Comparison()
        for round in 0..<rounds {
            // Alternate which goes first, so a trend over the run does not favour one side.
            let plainFirst = round % 2 == 0
            var p: MediaBench.Step?
            if plainFirst { p = try MediaBench.runStep(calls: calls, passthrough: false, seconds: seconds) }
            let s = try MediaBench.runStep(calls: calls, passthrough: false, seconds: seconds, srtp: suite)
            if !plainFirst { p = try MediaBench.runStep(calls: calls, passthrough: false, seconds: seconds) }
            c.plain.append(p!.cpuPerPacketUs)
            c.srtp.append(s.cpuPerPacketUs)
            c.last = s
        }
        return c
    }

    /// CPU ns of one protect and one unprotect of a 172-byte RTP packet, over `packets`.
    static func cryptoNanoseconds(suite: SRTPSuite, packets: Int = 50_000) throws -> Double {
        let keys = MediaBench.benchKeys(suite)
        let sender = try SRTPSession(keys), receiver = try SRTPSession(keys.mirrored)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0x55)
        // Unprotect leaves the plain packet in place: only the header changes per packet.
        let start = cpuNow()
        for n in 0..<packets {
            _ = try? RTPHeader(
                payloadType: 0, sequenceNumber: UInt16(truncatingIfNeeded: n), timestamp: UInt32(n) &* 160, ssrc: 7
            ).write(into: buffer)
            guard case .ok(let wire) = sender.protectRTP(buffer, length: 172),
                case .ok = receiver.unprotectRTP(buffer, length: wire)
            else { throw SRTPError(code: -1, operation: "bench packet \(n)") }
        }
        let elapsed = cpuNow() - start
        return elapsed / Double(packets) * 1e9
    }

    static func median(_ v: [Double]) -> Double {
        let s = v.sorted()
        return s.isEmpty ? 0 : s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func line(suite: SRTPSuite) throws -> String {
        func f2(_ v: Double) -> String { String(format: "%.2f", v) }
        let c = try compare(suite: suite)
        let ratio = median(c.ratios)
        let cryptoNs = try cryptoNanoseconds(suite: suite)
        // A call-frame is two packets processed (one from each leg).
        let frameNs = 2 * median(c.plain) * 1000
        let last = c.last!
        return "BENCH \(suite == .aeadAES128GCM ? "srtp-gcm" : "srtp") calls=\(calls) suite=\(suite.rawValue) "
            + "plain_us_per_packet=\(f2(median(c.plain))) srtp_us_per_packet=\(f2(median(c.srtp))) "
            + "ratio=\(f2(ratio)) target_ratio_min=\(aim) pass=\(ratio >= aim) "
            + "round_ratios=\(c.ratios.map(f2).joined(separator: "/")) "
            + "crypto_ns_per_call_frame=\(String(format: "%.0f", cryptoNs)) "
            + "crypto_only_ratio=\(String(format: "%.3f", frameNs / (frameNs + cryptoNs))) "
            + "p99_us=\(last.p99) late_frames=\(last.late) trunk_packets=\(last.trunkReceived) trunk_refused=\(last.trunkRefused)"
    }
}
