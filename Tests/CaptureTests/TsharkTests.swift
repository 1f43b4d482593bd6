import Foundation
import IOCore
import TestSupport
import Testing

@testable import Capture

/// tshark (Debian `tshark`) reads a file PcapWriter wrote: SIP over UDP/IPv4, UDP/IPv6 and
/// TCP, RTP decoded on its port, and no checksum or malformed-packet expert info with every
/// checksum check on.
@Test func tsharkDecodesWhatPcapWriterWrote() async throws {
    guard let tshark = CaptureTools.find("tshark") else {
        Issue.record(
            "tshark is not installed: install the Debian package `tshark` (apt-get install tshark) to run this test")
        return
    }
    let directory = try CaptureTools.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }

    let packets = PcapCase.all.flatMap(\.packets)
    var writer = PcapWriter()
    var file = PcapWriter.fileHeader()
    for packet in packets { file += writer.record(packet) }
    let path = directory.appendingPathComponent("call.pcap").path
    #expect(FileManager.default.createFile(atPath: path, contents: Data(file)))

    let fields = [
        "frame.number", "ip.src", "ipv6.src", "udp.srcport", "tcp.srcport", "sip.Method", "sip.Status-Code",
        "sip.Call-ID", "rtp.ssrc", "rtp.p_type", "rtp.seq", "_ws.expert.message", "_ws.malformed"
    ]
    var arguments = ["-n", "-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=;"]
    arguments += ["-d", "udp.port==\(Samples.rtpPort),rtp", "-d", "udp.port==\(Samples.rtpPort + 2),rtp"]
    arguments += ["-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    arguments += fields.flatMap { ["-e", $0] }
    // stderr apart: tshark warns there when it runs as root. `run` throws when 60 s pass.
    let result = try await ChildProcess.run(
        tshark, arguments, discardingErrors: true, unblockingSignals: true, timeout: 60)
    #expect(result.status == 0, "tshark exited \(result.status): \(result.output)")

    let rows = result.output.split(separator: "\n").map { line in
        Dictionary(
            uniqueKeysWithValues: zip(
                fields, line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)))
    }
    try #require(
        rows.count == packets.count,
        "tshark printed \(rows.count) rows for \(packets.count) packets:\n\(result.output)")

    for (row, packet) in zip(rows, packets) {
        let frame = row["frame.number"] ?? "?"
        if packet.source.isIPv6 {
            #expect(row["ipv6.src"] == packet.source.host, "frame \(frame)")
        } else {
            #expect(row["ip.src"] == packet.source.host, "frame \(frame)")
        }
        let port = packet.transport == .udp ? row["udp.srcport"] : row["tcp.srcport"]
        #expect(port == String(packet.source.port), "frame \(frame)")
        if packet.payload == Samples.invite {
            #expect(row["sip.Method"] == "INVITE", "frame \(frame): \(row)")
            #expect(row["sip.Call-ID"] == Samples.callID, "frame \(frame)")
        } else if packet.payload == Samples.ok {
            #expect(row["sip.Status-Code"] == "200", "frame \(frame): \(row)")
        } else {
            #expect(row["rtp.ssrc"] == "0x12345678", "frame \(frame): \(row)")
            #expect(row["rtp.p_type"] == "0", "frame \(frame): \(row)")
        }
        let expert = (row["_ws.expert.message"] ?? "").lowercased()
        for bad in ["checksum", "malformed", "bad", "incorrect", "invalid"] {
            #expect(!expert.contains(bad), "frame \(frame) expert info: \(row["_ws.expert.message"] ?? "")")
        }
        #expect((row["_ws.malformed"] ?? "").isEmpty, "frame \(frame) malformed")
    }
}
