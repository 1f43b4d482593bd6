import Foundation
import IrisAPI
import IrisClient
import SIP
import Testing

/// SIPp's message log as a list: (did SIPp send it, the message's lines without blanks), in
/// order. SIPp logs "UDP message sent (N bytes):" or "... received [N] bytes :" above each.
func sippMessages(_ log: String) -> [(sent: Bool, lines: [String])] {
    log.components(separatedBy: "-----------------------------------------------").compactMap { block in
        let lines = messageLines(block)
        guard let marker = lines.firstIndex(where: { $0.contains("message sent") || $0.contains("message received") }),
            marker + 1 < lines.count
        else { return nil }
        return (lines[marker].contains("message sent"), Array(lines[(marker + 1)...]))
    }
}

/// A message's lines, trimmed, without the empty ones (SIPp pads its log).
func messageLines(_ text: String) -> [String] {
    // Split on the byte: "\r\n" is one Character, which no "\n" split sees.
    text.utf8.split(separator: 10).map {
        String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
    .filter { !$0.isEmpty }
}

extension GatewaySuites {
    /// `GET /v1/sessions/{roomId}/sip`: the trunk leg's messages as the gateway sent and read
    /// them, checked against what SIPp, the carrier, logged on its side.
    @Suite struct GatewaySIPTraceTests {
        @Test func traceMatchesWhatTheCarrierSaw() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(earlyMedia: false))
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let room = try #require(session.roomId)
            try await session.close()
            #expect(await rec.waitFor(timeout: 10) { $0.contains { $0.event == .onSessionEnded } }, "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, "\(sipp.report)")
            // The trace outlives the session, like its snapshot.
            let connection = try gw.connection()
            let trace = try await connection.sipTrace(roomId: room)
            let carrier = sippMessages(sipp.messages)
            // Every message in order, whole: what we sent SIPp received, and the other way round.
            #expect(trace.messages.map(\.firstLine) == carrier.map { $0.lines.first ?? "" })
            #expect(trace.messages.map { messageLines($0.text) } == carrier.map(\.lines))
            #expect(trace.messages.map { $0.direction == "received" } == carrier.map(\.sent), "directions differ")
            #expect(trace.messages.map(\.firstLine).contains { $0.hasPrefix("ACK ") })
            #expect(trace.messages.map(\.firstLine).contains { $0.hasPrefix("BYE ") })
            // The full text, not only the first lines; addresses name both ends.
            let invite = try #require(trace.messages.first)
            #expect(invite.direction == "sent" && invite.transport == "UDP")
            #expect(invite.text.contains("\r\nCall-ID: ") && invite.text.contains("m=audio "), "\(invite.text)")
            #expect(invite.remote == "127.0.0.1:\(sipp.port)")
            #expect(trace.messages.allSatisfy { $0.remote == "127.0.0.1:\(sipp.port)" && $0.local == invite.local })
            #expect(trace.messages.map(\.time) == trace.messages.map(\.time).sorted())
            #expect(trace.dropped == 0 && trace.roomId == room)
        }

        @Test func unknownRoomIsNotFound() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            await #expect(throws: IrisError.self) { try await gw.connection().sipTrace(roomId: "no-such-room") }
            do {
                _ = try await gw.connection().sipTrace(roomId: "no-such-room")
            } catch let IrisError.api(status, _, message) {
                #expect(status == 404, "\(message)")
            }
        }
    }
}
