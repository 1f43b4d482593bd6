import IOCore
import Media
import SDP
import SIP
import Testing

@testable import Gateway

/// The SIPREC client's plain values: the metadata as the call changes (ids kept, joins and
/// leaves timed) and the recording server's answer read into where each stream goes.
@Suite struct SIPRECValuesTests {
    /// Ids "id1", "id2" ... in the order they are made.
    final class Counter {
        var n = 0
        func next() -> String {
            n += 1
            return "id\(n)"
        }
    }

    static let carrier = SIPRECParticipant.carrier(aor: "sip:+15551230001@carrier.example", name: "Carrier")
    static let app = SIPRECParticipant.application(aor: "sip:agent@app.example")

    @Test func participantsKeepTheirIdsAndTheirTimes() {
        let ids = Counter()
        var state = SIPRECMetadataState(
            sipSessionID: "call-1", participants: [Self.carrier, Self.app], now: "T0", newID: ids.next)
        // Session, two streams, two participants.
        #expect(state.sessionID == "id1")
        #expect(state.streamIDs == [.inbound: "id2", .outbound: "id3"])
        var m = state.metadata
        #expect(m.streams == [.init(id: "id2", label: "1"), .init(id: "id3", label: "2")])
        #expect(m.participants.map(\.id) == ["id4", "id5"])
        #expect(m.participants[0].sends == ["id2"] && m.participants[0].receives == ["id3"])
        #expect(m.participants[1].sends == ["id3"] && m.participants[1].receives == ["id2"])

        // Hold: the app sends nothing for a while; a transfer: another carrier party.
        var held = Self.app
        held.sends = []
        let transferred = SIPRECParticipant.carrier(aor: "sip:+15559990000@carrier.example")
        state.update([transferred, held], now: "T1", newID: ids.next)
        m = state.metadata
        #expect(m.participants.map(\.id) == ["id4", "id5", "id6"])
        #expect(m.participants[0].disassociated == "T1" && m.participants[0].sends.isEmpty)
        #expect(m.participants[1].sends.isEmpty && m.participants[1].associated == "T0")
        #expect(m.participants[2].associated == "T1" && m.participants[2].sends == ["id2"])

        // The first carrier party comes back: the same id, associated again.
        state.update([Self.carrier, Self.app], now: "T2", newID: ids.next)
        m = state.metadata
        #expect(m.participants[0].id == "id4" && m.participants[0].associated == "T2")
        #expect(m.participants[0].disassociated == nil)
        #expect(m.participants[2].disassociated == "T2")

        state.stop(now: "T3")
        m = state.metadata
        #expect(m.stopTime == "T3")
        #expect(m.participants.map(\.disassociated) == ["T3", "T3", "T2"])
        #expect(state.part.header("Content-Disposition") == "recording-session")
        #expect(state.part.contentType == RecordingMetadata.contentType)
    }

    @Test func theOfferHasTwoLabelledSendOnlyStreams() throws {
        let sdp = SIPRECStreams.offer(host: "127.0.0.1", ports: [40000, 40002], sessionID: "7")
        let again = try SessionDescription.parse(sdp.serialize())
        #expect(again.media.map(\.port) == [40000, 40002])
        #expect(again.media.map { $0.attributes.first(named: "label")?.value } == ["1", "2"])
        #expect(again.media.indices.map { again.direction(ofMedia: $0) } == [.sendonly, .sendonly])
        #expect(again.media.map(\.formats) == [["0"], ["0"]])
        #expect(again.connection?.host == "127.0.0.1")
    }

    static func answer(_ media: String, session: String = "c=IN IP4 127.0.0.1\r\n") -> SessionDescription? {
        try? SessionDescription.parse("v=0\r\no=srs 1 1 IN IP4 127.0.0.1\r\ns=-\r\n\(session)t=0 0\r\n\(media)")
    }

    static let pcmu = "RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

    /// Answers in, where each stream goes (host:port, "-" not sent) or the refusal out.
    static let answers: [(name: String, sdp: SessionDescription?, out: Result<[String], SIPRECEndReason>)] = [
        (
            "both taken", answer("m=audio 5000 \(pcmu)a=recvonly\r\nm=audio 5002 \(pcmu)a=recvonly\r\n"),
            .success(["127.0.0.1:5000", "127.0.0.1:5002"])
        ),
        (
            "one rejected with port 0", answer("m=audio 5000 \(pcmu)m=audio 0 \(pcmu)"),
            .success(["127.0.0.1:5000", "-"])
        ),
        (
            "one inactive", answer("m=audio 5000 \(pcmu)a=inactive\r\nm=audio 5002 \(pcmu)"),
            .success(["-", "127.0.0.1:5002"])
        ),
        (
            "its own c= per stream",
            answer("m=audio 5000 \(pcmu)c=IN IP4 127.0.0.2\r\nm=audio 5002 \(pcmu)", session: ""),
            .success(["127.0.0.2:5000", "-"])
        ),
        ("no PCMU in one", answer("m=audio 5000 RTP/AVP 8\r\nm=audio 5002 \(pcmu)"), .success(["-", "127.0.0.1:5002"])),
        (
            "a host name, not an address",
            answer("m=audio 5000 \(pcmu)m=audio 5002 \(pcmu)", session: "c=IN IP4 srs.example\r\n"),
            .failure(.badAnswer("no stream to send to"))
        ),
        ("no SDP", nil, .failure(.badAnswer("no SDP in the answer"))),
        ("one m= line", answer("m=audio 5000 \(pcmu)"), .failure(.badAnswer("1 m= line(s) in the answer, 2 offered"))),
        (
            "three m= lines", answer("m=audio 5000 \(pcmu)m=audio 5002 \(pcmu)m=audio 5004 \(pcmu)"),
            .failure(.badAnswer("3 m= line(s) in the answer, 2 offered"))
        ),
        ("both rejected", answer("m=audio 0 \(pcmu)m=audio 0 \(pcmu)"), .failure(.badAnswer("no stream to send to")))
    ]

    @Test(arguments: answers.indices)
    func theAnswerSaysWhereEachStreamGoes(_ index: Int) {
        let row = Self.answers[index]
        let out = Result { () throws(SIPRECEndReason) -> [String] in
            try SIPRECStreams.destinations(in: row.sdp).map { $0?.description ?? "-" }
        }
        #expect(out == row.out, "\(row.name)")
    }
}
