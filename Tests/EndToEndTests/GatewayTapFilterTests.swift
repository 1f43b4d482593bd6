import Capture
import Foundation
import IOCore
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing
import WebClient

extension GatewaySuites {
    /// Taps after filters (issue 21): what a banned or unknown source sends reaches neither
    /// the HEP collector nor a session's trace, and a stranger who knows a session's
    /// Call-ID cannot write into its trace. Real `irisgw serve`, SIPp as the carrier on
    /// 127.0.0.1, strangers on other loopback addresses.
    @Suite struct GatewayTapFilterTests {
        /// A UDP socket on `host` (127.0.0.2, 127.0.0.3 ... are on lo), port from the OS.
        final class Stranger {
            let socket: UDPSocket
            private var buffer = [UInt8](repeating: 0, count: 65_536)
            init(_ host: String) throws { socket = try UDPSocket(bind: SocketAddress(host: host, port: 0)) }

            func send(_ text: String, to port: Int) { send(bytes: Array(text.utf8), to: port) }

            func send(bytes: [UInt8], to port: Int) {
                guard let to = RawSocketAddress(SocketAddress(host: "127.0.0.1", port: port)) else { return }
                _ = bytes.withUnsafeBytes { socket.send($0, to: to) }
            }

            func receive() -> String? {
                var from = RawSocketAddress()
                guard let n = buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) else {
                    return nil
                }
                return String(decoding: buffer[0..<n], as: UTF8.self)
            }
        }

        static func request(
            _ method: String, callID: String, probe: String, from stranger: Stranger, toTag: String? = nil
        ) -> String {
            let via = stranger.socket.local
            return "\(method) sip:+15551230001@127.0.0.1 SIP/2.0\r\n"
                + "Via: SIP/2.0/UDP \(via);branch=z9hG4bK\(UUID().uuidString.prefix(12))\r\n"
                + "From: <sip:+15557654321@\(via.host)>;tag=stranger\r\n"
                + "To: <sip:+15551230001@127.0.0.1>" + (toTag.map { ";tag=\($0)" } ?? "") + "\r\n"
                + "Call-ID: \(callID)\r\nCSeq: 7 \(method)\r\nMax-Forwards: 70\r\nX-Probe: \(probe)\r\nContent-Length: 0\r\n\r\n"
        }

        /// The session's Call-ID, from its trace's first message (our INVITE).
        static func callID(_ trace: SIPTraceDocument) throws -> String {
            let invite = try #require(trace.messages.first)
            return try #require(
                SIPWireMessage(
                    time: 0, direction: .sent, transport: .udp, local: SocketAddress(host: "127.0.0.1", port: 0),
                    remote: SocketAddress(host: "127.0.0.1", port: 0), bytes: Array(invite.text.utf8)
                ).callID)
        }

        @Test func aBannedSourcesFloodReachesNeitherHEPNorTraces() async throws {
            let collector = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), gatewayArguments: ["--hep", collector.local.description],
                config: "{ sip: { requestsPerSecond: 20, banSec: 60 } }")
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let room = try #require(session.roomId)
            let callID = try await Self.callID(try session.connection.sipTrace(roomId: room))
            // An unknown source floods until it is banned, then sends a BYE of the live call.
            let flooder = try Stranger("127.0.0.3")
            for _ in 0..<100 {
                flooder.send(
                    Self.request("OPTIONS", callID: UUID().uuidString, probe: "flood", from: flooder), to: gw.sipPort)
            }
            #expect(await eventually(timeout: 10) { await HostileTrafficTests.refused(gw, "sip_banned") >= 1 })
            flooder.send(
                Self.request("BYE", callID: callID, probe: "banned-bye", from: flooder, toTag: "x"), to: gw.sipPort)
            #expect(await eventually(timeout: 10) { await HostileTrafficTests.refused(gw, "sip_banned") >= 2 })

            try await session.close()
            #expect(await rec.waitFor(timeout: 10) { $0.contains { $0.event == .onSessionEnded } })
            var received: [HEPPacket] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var from = RawSocketAddress()
            func drain() {
                while let n = buffer.withUnsafeMutableBytes({ collector.receive(into: $0, from: &from) }) {
                    if let p = try? HEPPacket(decoding: Array(buffer[0..<n])) { received.append(p) }
                }
            }
            // The call's last message (the 200 to our BYE) reached the collector: the flood,
            // read before it, had its chance.
            #expect(
                await eventually(timeout: 10) {
                    drain()
                    return received.contains {
                        $0.payloadType == .sip
                            && String(decoding: $0.payload, as: UTF8.self).hasPrefix("SIP/2.0 200 OK")
                            && String(decoding: $0.payload, as: UTF8.self).contains(" BYE\r\n")
                    }
                })
            let texts = received.filter { $0.payloadType == .sip }.map { String(decoding: $0.payload, as: UTF8.self) }
            #expect(
                !texts.contains { $0.contains("X-Probe") },
                "\(texts.filter { $0.contains("X-Probe") }.count) of the flood's messages reached HEP")
            #expect(!received.contains { $0.source.host == "127.0.0.3" || $0.destination.host == "127.0.0.3" })
            let trace = try await gw.connection().sipTrace(roomId: room)
            #expect(!trace.messages.contains { $0.text.contains("X-Probe") })
            #expect(texts.contains { $0.hasPrefix("INVITE ") }, "the call's own SIP is still copied")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func aStrangerWithTheCallIDCannotWriteIntoTheTrace() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let room = try #require(session.roomId)
            let callID = try await Self.callID(try session.connection.sipTrace(roomId: room))
            // A request of the call from an address that is not its peer: the SIP layer
            // answers it (481, no such dialog), and the session's trace keeps neither.
            let stranger = try Stranger("127.0.0.2")
            stranger.send(
                Self.request("INFO", callID: callID, probe: "stranger", from: stranger, toTag: "not-ours"),
                to: gw.sipPort)
            var answer: String?
            #expect(
                await eventually(timeout: 10) {
                    answer = answer ?? stranger.receive()
                    return answer != nil
                })
            #expect(answer?.hasPrefix("SIP/2.0 481") == true, "\(answer ?? "")")
            #expect(try await closeAndWaitForTheTrace(session, rec, room: room))
            let trace = try await gw.connection().sipTrace(roomId: room)
            #expect(
                !trace.messages.contains { $0.text.contains("X-Probe") || $0.remote.hasPrefix("127.0.0.2:") },
                "\(trace.messages.map { "\($0.remote) \($0.firstLine)" })")
            // Its own messages are all there.
            #expect(trace.messages.map(\.firstLine).contains { $0.hasPrefix("BYE ") })
            #expect(trace.messages.allSatisfy { $0.remote == "127.0.0.1:\(sipp.port)" })
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        /// `sip.tapUnfiltered` (debugging): an unknown source's request is still dropped
        /// unanswered, and the collector gets it all the same.
        @Test func tapUnfilteredCopiesWhatTheDefenceDrops() async throws {
            let collector = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
            let gw = try await GatewayProcess(
                profiles: [.init()], extraArguments: ["--hep", collector.local.description],
                config: "{ sip: { tapUnfiltered: true } }")
            defer { gw.stop() }
            let stranger = try Stranger("127.0.0.3")
            stranger.send(
                Self.request("OPTIONS", callID: UUID().uuidString, probe: "debugging", from: stranger), to: gw.sipPort)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var from = RawSocketAddress()
            var copied: HEPPacket?
            #expect(
                await eventually(timeout: 10) {
                    while copied == nil,
                        let n = buffer.withUnsafeMutableBytes({ collector.receive(into: $0, from: &from) })
                    {
                        if let p = try? HEPPacket(decoding: Array(buffer[0..<n])),
                            String(decoding: p.payload, as: UTF8.self).contains("X-Probe: debugging")
                        {
                            copied = p
                        }
                    }
                    return copied != nil
                })
            #expect(copied?.source.host == "127.0.0.3")
            #expect(await eventually(timeout: 10) { await HostileTrafficTests.refused(gw, "sip_unknown_source") >= 1 })
            #expect(stranger.receive() == nil, "still no answer to an unknown source")
        }

        /// Empty and short datagrams to a captured call's trunk RTP port are not recorded:
        /// the pcap holds none of them, and says how many it left out. (Whether the media
        /// path lets them reach the capture at all is the RTP source check's business; the
        /// capture refuses them either way.)
        @Test func emptyDatagramsToACapturedCallDoNotGrowTheCapture() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(), sippArguments: ["-rtp_echo"])
            defer { gw.stop(); sipp.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            let room = try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321", capture: true)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            // Our trunk RTP port, from our INVITE's SDP.
            let rtpPort = try await #require(try session.connection.sipTrace(roomId: room).ourMediaPort)
            #expect(
                await eventually(timeout: 10) {
                    ((try? session.connection.snapshot(roomId: room))?.trunk?.packetsReceived ?? 0) > 10
                })
            let stranger = try Stranger("127.0.0.2")
            for i in 0..<400 { stranger.send(bytes: [UInt8](repeating: 0x80, count: i % 2 == 0 ? 0 : 5), to: rtpPort) }
            let sentAt = Date().timeIntervalSince1970
            let client = try HTTPClient(baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey])
            var pcap: (status: Int, headers: [String: String], body: [UInt8])?
            // The socket is read in order: once the capture holds the carrier's RTP read after
            // the junk was sent, the junk was read before it.
            #expect(
                await eventually(timeout: 10) {
                    pcap = try? await client.request(method: "GET", path: "/v1/sessions/\(room)/pcap", timeout: 5)
                    guard let body = pcap?.body, let packets = try? PcapReader(bytes: body).packets else {
                        return false
                    }
                    return packets.contains { $0.destination.port == rtpPort && $0.time > sentAt + 0.05 }
                })
            let response = try #require(pcap)
            #expect(response.status == 200 && response.headers["x-capture-dropped"] == "0", "\(response.headers)")
            #expect(response.headers["x-capture-ignored"].flatMap { Int($0) } != nil, "\(response.headers)")
            let packets = try PcapReader(bytes: response.body).packets
            let toRTP = packets.filter { $0.destination.port == rtpPort }
            #expect(
                !toRTP.isEmpty && toRTP.allSatisfy { $0.payload.count >= 12 },
                "\(toRTP.filter { $0.payload.count < 12 }.count) empty or short datagrams recorded")
            try await session.close()
            #expect(await rec.waitFor(timeout: 10) { $0.contains { $0.event == .onSessionEnded } })
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }
    }
}
