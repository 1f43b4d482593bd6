import Capture
import Foundation
import IOCore
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// What the gateway captures of a call for a carrier dispute: the pcap of the trunk leg
    /// (`capture: true`, `GET /v1/sessions/{roomId}/pcap`) read back by tshark, and the copies
    /// a HEP collector gets (`serve --hep`), decoded from the HEP v3 wire format.
    @Suite struct GatewayCaptureTests {
        /// tshark's fields of every frame of `file` (RTP found by its heuristic: any port).
        static func tshark(_ file: String, fields: [String]) async throws -> [[String: String]] {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
                throw SocketError("tshark is not installed (make deps installs the Debian package)", code: ENOENT)
            }
            let r = try await ChildProcess.run(
                "/usr/bin/tshark",
                [
                    "-n", "-r", file, "-o", "rtp.heuristic_rtp:TRUE", "-o", "rtcp.heuristic_rtcp:TRUE", "-T", "fields",
                    "-E", "separator=|", "-E", "occurrence=f"
                ] + fields.flatMap { ["-e", $0] },
                discardingErrors: true, timeout: 60)
            return r.output.split(separator: "\n").map { line in
                Dictionary(
                    uniqueKeysWithValues: zip(
                        fields, line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)))
            }
        }

        @Test func pcapOfACallHoldsItsSIPAndRTP() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(), sippArguments: ["-rtp_echo"])
            defer { gw.stop(); sipp.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            let room = try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321", capture: true)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            // Two seconds of echoed audio: about 100 packets each way.
            #expect(
                await eventually(timeout: 10) {
                    ((try? session.connection.snapshot(roomId: room))?.trunk?.packetsReceived ?? 0) > 100
                })
            #expect(try await closeAndWaitForTheTrace(session, rec, room: room))
            let bytes = try await session.connection.capture(roomId: room)
            let file = gw.directory.appendingPathComponent("call.pcap").path
            #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))

            // Our own reader and tshark agree on what is in it.
            let packets = try PcapReader(bytes: bytes).packets
            #expect(packets.map(\.time) == packets.map(\.time).sorted(), "time order")
            let rows = try await Self.tshark(
                file,
                fields: [
                    "sip.Method", "sip.Status-Code", "rtp.ssrc", "rtp.p_type", "rtcp.pt", "_ws.malformed", "udp.srcport"
                ])
            #expect(rows.count == packets.count, "tshark read \(rows.count) of \(packets.count) frames")
            let sip = rows.compactMap { r in
                (r["sip.Method"].flatMap { $0.isEmpty ? nil : $0 })
                    ?? (r["sip.Status-Code"].flatMap { $0.isEmpty ? nil : $0 })
            }
            #expect(sip == ["INVITE", "100", "180", "200", "ACK", "BYE", "200"], "\(sip)")
            let rtp = rows.filter { !($0["rtp.ssrc"] ?? "").isEmpty }
            // Both ways (SIPp's echo keeps our SSRC, so the ports tell the directions apart).
            let sources = Set(rtp.compactMap { $0["udp.srcport"] })
            #expect(rtp.count > 150 && sources.count == 2, "\(rtp.count) RTP packets from ports \(sources)")
            #expect(rtp.allSatisfy { $0["rtp.p_type"] == "0" }, "PCMU both ways on the trunk")
            #expect(rows.contains { !($0["rtcp.pt"] ?? "").isEmpty }, "our RTCP report")
            #expect(rows.allSatisfy { ($0["_ws.malformed"] ?? "").isEmpty })
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func aSessionWithoutCaptureSaysSo() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            let (session, _) = try await placedSession(gw)
            defer { session.stop() }
            let room = try #require(session.roomId)
            let error = await #expect(throws: IrisError.self) { try await session.connection.capture(roomId: room) }
            guard case .api(let status, _, let message)? = error else { return }
            #expect(status == 404 && message.contains("capture"), "\(message)")
            try await session.close()
        }

        @Test func hepCollectorGetsTheCallsSIPAndRTCP() async throws {
            let collector = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), sippArguments: ["-rtp_echo"],
                gatewayArguments: ["--hep", collector.local.description])
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw, source: .tone(hz: 440, amplitude: 0.3))
            defer { session.stop() }
            let room = try #require(session.roomId)
            var received: [HEPPacket] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var from = RawSocketAddress()
            func drain() {
                while let n = buffer.withUnsafeMutableBytes({ collector.receive(into: $0, from: &from) }) {
                    if let p = try? HEPPacket(decoding: Array(buffer[0..<n])) { received.append(p) }
                }
            }
            // Our RTCP report goes out once the carrier's address is known.
            #expect(
                await eventually(timeout: 10) {
                    drain(); return received.contains { $0.payloadType == .rtcpJSON }
                })
            try await session.close()
            #expect(await rec.waitFor(timeout: 10) { $0.contains { $0.event == .onSessionEnded } })
            let trace = try await session.connection.sipTrace(roomId: room)
            _ = await eventually(timeout: 5) {
                drain(); return received.filter { $0.payloadType == .sip }.count >= trace.messages.count
            }
            let sip = received.filter { $0.payloadType == .sip }
            // Every SIP message of the call, in order and whole, with its addresses.
            #expect(sip.map { String(decoding: $0.payload, as: UTF8.self) } == trace.messages.map(\.text))
            let invite = try #require(sip.first)
            #expect(
                invite.destination.description == "127.0.0.1:\(sipp.port)" && invite.transport == .udp
                    && invite.captureID == 2001)
            let callID = try #require(
                SIPWireMessage(
                    time: 0, direction: .sent, transport: .udp, local: invite.source,
                    remote: invite.destination, bytes: invite.payload
                ).callID)
            let rtcp = try #require(received.first { $0.payloadType == .rtcpJSON })
            #expect(rtcp.correlationID == callID)
            let json = try JSONSerialization.jsonObject(with: Data(rtcp.payload)) as? [String: Any]
            #expect(
                [200, 201].contains(json?["type"] as? Int ?? 0) && json?["ssrc"] != nil,
                "\(String(decoding: rtcp.payload, as: UTF8.self))")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }
    }
}
