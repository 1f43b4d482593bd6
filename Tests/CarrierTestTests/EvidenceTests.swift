import Capture
import Foundation
import IOCore
import IrisAPI
import Media
import Testing

@testable import CarrierTest

/// `--evidence`: file names from test names, the trunk's RTP port from our SDP, the two
/// directions of a capture turned into WAV files, and links relative to the report.
@Suite struct EvidenceTests {
    @Test(arguments: [
        ("answers and echoes", "answers-and-echoes"), ("183 without SDP, then answer!", "183-without-sdp-then-answer"),
        ("Ünïcode / slashes", "n-code-slashes"), ("---", "test")
    ])
    func slugs(_ name: String, _ slug: String) {
        #expect(Evidence.slug(name) == slug)
    }

    @Test(
        arguments: [
            ("/srv/reports/ev/a.pcap", "/srv/reports", "ev/a.pcap"),
            ("/srv/ev/a.pcap", "/srv/reports", "../ev/a.pcap"),
            ("/srv/reports/a.wav", "/srv/reports", "a.wav"),
            ("ev/a.pcap", "/srv/reports", "ev/a.pcap")
        ] as [(String, String, String)])
    func linksAreRelativeToTheReport(_ path: String, _ folder: String, _ link: String) {
        #expect(Reports.relativePath(path, from: folder) == link)
        #expect(Reports.relativePath(path, from: nil) == path)
    }

    static func message(_ direction: String, _ text: String) -> SIPTraceMessage {
        SIPTraceMessage(
            time: 1, direction: direction, transport: "UDP", local: "10.0.0.5:5060", remote: "192.0.2.10:5060",
            text: text)
    }

    @Test func ourMediaPortComesFromOurSDP() {
        let theirs = Self.message("received", "SIP/2.0 200 OK\r\n\r\nv=0\r\nm=audio 30000 RTP/AVP 0\r\n")
        let ours = Self.message("sent", "INVITE sip:x SIP/2.0\r\n\r\nv=0\r\nm=audio 20000 RTP/AVP 0 8\r\n")
        #expect(SIPTraceDocument(roomId: "r", messages: [theirs, ours]).ourMediaPort == 20000)
        #expect(SIPTraceDocument(roomId: "r", messages: [theirs]).ourMediaPort == nil)
    }

    @Test func aCaptureBecomesAPcapAndTwoRecordings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-evidence-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let us = SocketAddress(host: "10.0.0.5", port: 20000), them = SocketAddress(host: "192.0.2.10", port: 30000)
        // 10 PCMU packets each way: a tone from the carrier, silence from us.
        var writer = PcapWriter()
        var file = PcapWriter.fileHeader()
        for i in 0..<10 {
            let pcm = (0..<160).map { n in Int16(8000 * sin(Double(i * 160 + n) * 2 * .pi * 1000 / 8000)) }
            var tone: [UInt8] = []
            G711.encodeULaw(pcm, into: &tone)
            let header: [UInt8] = [
                0x80, 0, 0, UInt8(i), 0, 0, UInt8((i * 160) >> 8), UInt8((i * 160) & 0xFF), 0, 0, 0, 1
            ]
            file += writer.record(
                CapturedPacket(
                    time: Double(i) * 0.02, source: them, destination: us, transport: .udp, payload: header + tone))
            file += writer.record(
                CapturedPacket(
                    time: Double(i) * 0.02, source: us, destination: them, transport: .udp,
                    payload: header + [UInt8](repeating: 0xFF, count: 160)))
        }
        let trace = SIPTraceDocument(
            roomId: "r", messages: [Self.message("sent", "INVITE sip:x SIP/2.0\r\n\r\nm=audio 20000 RTP/AVP 0\r\n")])
        let (evidence, problem) = Evidence.save(
            pcap: file, trace: trace, directory: folder, test: "echo test", iteration: 2)
        #expect(problem == nil)
        #expect(
            evidence.pcap == folder + "/echo-test-2.pcap" && evidence.carrierWAV == folder + "/echo-test-2-carrier.wav"
                && evidence.appWAV == folder + "/echo-test-2-app.wav")
        let carrier = try WAVFile(contentsOf: try #require(evidence.carrierWAV))
        let app = try WAVFile(contentsOf: try #require(evidence.appWAV))
        #expect(carrier.sampleRate == 8000 && carrier.samples.count == 1600 && app.samples.count == 1600)
        #expect(AudioAnalyzer.score(carrier.samples, sampleRate: 8000, tones: [1000]).tonesFound == [1000])
        #expect(app.samples.allSatisfy { abs(Int($0)) < 10 }, "silence from us")
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(evidence.pcap))) == Data(file))
    }
}
