// How BENCH cluster times the carrier's BYEs: SIPp's message trace, read while SIPp runs.

import Foundation
import Glibc
import TestSupport
import Testing

@testable import irisgw_bench

@Suite struct SIPpMessageLogTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func block(_ time: String, _ direction: String, _ message: String) -> String {
        "----------------------------------------------- \(time)\nUDP message \(direction) [\(message.utf8.count)] bytes :\n\n\(message)\n\n"
    }

    static func bye(callID: String, reason: String?) -> String {
        "BYE sip:service@127.0.0.1:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1\r\n"
            + "Call-ID: \(callID)\r\nCSeq: 2 BYE\r\n" + (reason.map { "Reason: \($0)\r\n" } ?? "")
            + "Content-Length: 0\r\n\r\n"
    }

    @Test func receivedMessagesCarryTheTimeSIPpLoggedThem() {
        let log =
            Self.block("2026-12-05 15:46:35.358890", "received", "INVITE sip:a@b SIP/2.0\r\n\r\n")
            + Self.block("2026-12-05 15:46:35.400000", "sent", "SIP/2.0 200 OK\r\n\r\n")
            + Self.block("2026-12-05 15:46:36.000001", "received", "ACK sip:a@b SIP/2.0\r\n\r\n")
        let received = SIPpMessageLog.received(log, timeZone: Self.utc)
        #expect(received.map { $0.message.prefix(3) } == ["INV", "ACK"], "what SIPp sent is left out")
        // 2026-12-05T15:46:35Z
        #expect(abs(received[0].at - 1_796_485_595.358890) < 1e-5)
        #expect(abs(received[1].at - received[0].at - 0.641111) < 1e-5)
    }

    @Test func byesWithTheReasonAreKeptByCallIDWithTheirRetransmissions() {
        let lost = #"Q.850;cause=41;text="gateway node lost""#
        let log =
            "x bytes :\n\nthe cut-off end of a block before the offset\r\n\r\n"
            + Self.block("2026-12-05 10:00:01.000000", "received", Self.bye(callID: "a@h", reason: lost))
            + Self.block("2026-12-05 10:00:01.500000", "received", Self.bye(callID: "b@h", reason: nil))
            + Self.block("2026-12-05 10:00:02.250000", "received", Self.bye(callID: "c@h", reason: lost))
            + Self.block("2026-12-05 10:00:03.000000", "received", Self.bye(callID: "a@h", reason: lost))
        let byes = SIPpMessageLog.byes(log, reason: "gateway node lost", timeZone: Self.utc)
        #expect(byes.keys.sorted() == ["a@h", "c@h"])
        #expect(byes["a@h"]?.count == 2, "the first and its retransmission")
        #expect(abs(byes["c@h"]![0] - byes["a@h"]![0] - 1.25) < 1e-6)
        #expect(abs(byes["a@h"]![1] - byes["a@h"]![0] - 2) < 1e-6)
    }

    /// The format as this machine's SIPp writes it: a real `uac` call to a real `uas`.
    @Test func aRealSIPpTraceIsRead() async throws {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-sipp-\(getpid()).log")
        defer { try? FileManager.default.removeItem(at: trace) }
        let port = try freePort(), clientPort = try freePort()
        let before = Date().timeIntervalSince1970
        let uas = try ChildProcess(
            "/usr/bin/sipp",
            [
                "-sn", "uas", "-i", "127.0.0.1", "-p", "\(port)", "-nostdin", "-timeout", "30s", "-trace_msg",
                "-message_file", trace.path
            ], unblockingSignals: true)
        defer { uas.stop() }
        let uac = try ChildProcess(
            "/usr/bin/sipp",
            ["-sn", "uac", "127.0.0.1:\(port)", "-i", "127.0.0.1", "-p", "\(clientPort)", "-m", "1", "-nostdin"],
            unblockingSignals: true)
        defer { uac.stop() }
        var received: [SIPpMessageLog.Received] = []
        #expect(
            await eventually(timeout: 20) {
                received = SIPpMessageLog.received((try? String(contentsOf: trace, encoding: .utf8)) ?? "")
                return received.contains { $0.message.hasPrefix("BYE ") }
            }, "\(uas.output)")
        let after = Date().timeIntervalSince1970
        // Waited for: the test process may end before a `defer`'s SIGKILL would come.
        await uas.stopped()
        await uac.stopped()
        #expect(received.map { String($0.message.prefix(3)) } == ["INV", "ACK", "BYE"])
        #expect(received.allSatisfy { $0.at >= before - 0.01 && $0.at <= after + 0.01 }, "local time read as such")
    }
}
