import Capture
import IOCore
import Media
import SIP
import Synchronization
import Testing

@testable import Gateway

/// Sessions' traces found by Call-ID, messages seen before a session claims its Call-ID,
/// retention after the end and the shared bound on ended captures' media: a plain struct,
/// no socket and no clock.
@Suite struct SessionCapturesTests {
    static let us = SocketAddress(host: "10.0.0.5", port: 5060)
    static let carrier = SocketAddress(host: "192.0.2.10", port: 5060)

    static func message(
        _ firstLine: String, callID: String, _ direction: SIPWireMessage.Direction = .sent, at time: Double = 1,
        compact: Bool = false
    ) -> SIPWireMessage {
        let text =
            "\(firstLine)\r\nVia: SIP/2.0/UDP 10.0.0.5\r\n\(compact ? "i" : "Call-ID"): \(callID)\r\nCSeq: 1 INVITE\r\n\r\n"
        return SIPWireMessage(
            time: time, direction: direction, transport: .udp, local: us, remote: carrier, bytes: Array(text.utf8))
    }

    @Test(
        arguments: [
            ("INVITE sip:a SIP/2.0\r\nCall-ID: abc@h\r\n\r\n", "abc@h"),
            ("SIP/2.0 200 OK\r\ni:  x-1 \r\n\r\n", "x-1"),
            ("BYE sip:a SIP/2.0\r\ncall-id:\tlower\r\nContent-Length: 0\r\n\r\n", "lower"),
            ("INVITE sip:a SIP/2.0\r\nCall-Info: <x>\r\nCall-ID: after-info\r\n\r\n", "after-info"),
            ("INVITE sip:a SIP/2.0\r\nVia: x\r\n\r\nCall-ID: in-the-body\r\n", nil),
            ("garbage", nil)
        ] as [(String, String?)])
    func callIDIsScannedFromTheHeaders(_ text: String, _ expected: String?) {
        let m = SIPWireMessage(
            time: 0, direction: .received, transport: .udp, local: Self.us, remote: Self.carrier,
            bytes: Array(text.utf8))
        #expect(m.callID == expected)
    }

    @Test func messagesBeforeTheSessionClaimsItsCallIDAreAdopted() {
        var captures = SessionCaptures(retention: 300)
        // An inbound INVITE and our 100 come before the session exists; another call's too.
        captures.sip(Self.message("INVITE sip:+1555@10.0.0.5 SIP/2.0", callID: "in-1", .received))
        captures.sip(Self.message("INVITE sip:+1666@10.0.0.5 SIP/2.0", callID: "other", .received))
        captures.sip(Self.message("SIP/2.0 100 Trying", callID: "in-1", compact: true))
        let capture = SessionCapture(roomId: "r1", recordsMedia: false)
        captures.open(capture)
        captures.bind(callID: "in-1", to: capture, peer: Self.carrier.host)
        captures.sip(Self.message("SIP/2.0 180 Ringing", callID: "in-1"))
        let trace = capture.traceDocument()
        #expect(
            trace.messages.map(\.firstLine) == [
                "INVITE sip:+1555@10.0.0.5 SIP/2.0", "SIP/2.0 100 Trying", "SIP/2.0 180 Ringing"
            ])
        #expect(trace.messages.map(\.direction) == ["received", "sent", "sent"])
        #expect(trace.messages.first?.local == "10.0.0.5:5060" && trace.messages.first?.remote == "192.0.2.10:5060")
        #expect(capture.callID == "in-1" && captures["r1"] === capture)
    }

    @Test func pendingMessagesAreBounded() {
        var captures = SessionCaptures(retention: 300)
        captures.sip(Self.message("INVITE sip:old SIP/2.0", callID: "old"))
        for i in 0..<SessionCaptures.pendingLimit {
            captures.sip(Self.message("OPTIONS sip:x SIP/2.0", callID: "ping-\(i)"))
        }
        let late = SessionCapture(roomId: "late", recordsMedia: false)
        captures.open(late)
        captures.bind(callID: "old", to: late)
        #expect(late.traceDocument().messages.isEmpty, "the oldest unclaimed message made room")
    }

    @Test func adoptionKeepsWireOrderAfterTheRingWraps() {
        var captures = SessionCaptures(retention: 300)
        let total = SessionCaptures.pendingLimit + 5
        for i in 0..<total {
            captures.sip(
                Self.message("OPTIONS sip:x SIP/2.0", callID: i % 3 == 0 ? "mine" : "other-\(i)", at: Double(i)))
        }
        let c = SessionCapture(roomId: "r", recordsMedia: false)
        captures.open(c)
        captures.bind(callID: "mine", to: c)
        // The five oldest were pushed out; what is left comes oldest first.
        let times = c.traceDocument().messages.map(\.time)
        #expect(times == stride(from: 6, to: Double(total), by: 3).map { $0 }, "\(times)")
        // The others are still waiting, and new ones keep coming in order.
        let other = SessionCapture(roomId: "o", recordsMedia: false)
        captures.open(other)
        captures.bind(callID: "other-\(total - 2)", to: other)
        #expect(other.traceDocument().messages.map(\.time) == [Double(total - 2)])
    }

    @Test func endedCapturesStayForTheRetentionThenGo() {
        var captures = SessionCaptures(retention: 10, capacity: 2)
        for (i, room) in ["a", "b", "c"].enumerated() {
            let c = SessionCapture(roomId: room, recordsMedia: false)
            captures.open(c)
            captures.bind(callID: "call-\(room)", to: c)
            captures.ended(roomId: room, now: Double(i))
        }
        // The capacity keeps the last two ended; a late BYE of one still lands in its trace.
        #expect(captures["a"] == nil && captures["b"] != nil && captures["c"] != nil)
        captures.sip(Self.message("BYE sip:x SIP/2.0", callID: "call-c"))
        #expect(captures["c"]?.traceDocument().messages.count == 1)
        // Past the retention they go, and their Call-IDs with them.
        let d = SessionCapture(roomId: "d", recordsMedia: false)
        captures.open(d)
        captures.ended(roomId: "d", now: 100)
        #expect(captures["b"] == nil && captures["c"] == nil && captures["d"] != nil)
        captures.sip(Self.message("BYE sip:x SIP/2.0", callID: "call-c"))
        #expect(captures.count == 1)
    }

    @Test func endedCapturesShareAMediaBudgetOldestFreedFirst() throws {
        let rtp = [UInt8](repeating: 0x80, count: 1000)
        let one = SessionCapture(roomId: "one", recordsMedia: true)
        rtp.withUnsafeBytes {
            one.mediaPacket($0, sent: true, rtcp: false, local: Self.us, remote: Self.carrier, time: 1)
        }
        var captures = SessionCaptures(retention: 300, maxEndedMediaBytes: one.mediaBytes * 5 / 2)
        for (i, room) in ["a", "b", "c"].enumerated() {
            let c = SessionCapture(roomId: room, recordsMedia: true)
            captures.open(c)
            rtp.withUnsafeBytes {
                c.mediaPacket($0, sent: true, rtcp: false, local: Self.us, remote: Self.carrier, time: 1)
            }
            captures.ended(roomId: room, now: Double(i))
        }
        #expect(captures["a"]?.captured() == nil && captures["a"]?.mediaWasFreed == true, "the oldest one's media went")
        #expect(captures["b"]?.captured()?.media.count == 1 && captures["c"]?.captured()?.media.count == 1)
        #expect(captures.liveBudget.taken == 0, "ended captures left the live budget")
        #expect(captures["a"] != nil, "its trace stays")
    }

    @Test func aCaptureStopsTakingMediaAtItsBound() throws {
        // Room for exactly one chunk: 16 KiB of packets with their headers, then no more.
        let oneChunk = CapturedMedia.chunkBytes + CapturedMedia.allocationOverhead + CapturedMedia.pairBytes
        let c = SessionCapture(roomId: "r", recordsMedia: true, maxMediaBytes: oneChunk)
        let rtp = [UInt8](repeating: 0x80, count: 800)
        for _ in 0..<30 {
            rtp.withUnsafeBytes {
                c.mediaPacket($0, sent: false, rtcp: false, local: Self.us, remote: Self.carrier, time: 2)
            }
        }
        let fits = CapturedMedia.chunkBytes / (800 + CapturedMedia.headerBytes)
        let media = try #require(c.captured()).media
        #expect(media.count == fits && c.captured()?.mediaDropped == 30 - fits && c.mediaBytes == oneChunk)
        // Received packets run from the carrier to us.
        #expect(media.records.first?.source == Self.carrier && media.records.first?.destination == Self.us)
        #expect(media.records.allSatisfy { $0.bytes.elementsEqual(rtp) })
    }

    /// Empty and short datagrams (shorter than an RTP or RTCP header) are not recorded, and
    /// what is recorded is counted with its headers and allocations, not its payload alone.
    @Test(arguments: [(0, false), (1, false), (11, false), (0, true), (7, true)])
    func emptyAndShortDatagramsAreNotRecorded(_ length: Int, _ rtcp: Bool) {
        let c = SessionCapture(roomId: "r", recordsMedia: true)
        let junk = [UInt8](repeating: 0x80, count: length)
        for _ in 0..<1000 {
            junk.withUnsafeBytes {
                c.mediaPacket($0, sent: false, rtcp: rtcp, local: Self.us, remote: Self.carrier, time: 1)
            }
        }
        #expect(c.mediaCounts == SessionCapture.MediaCounts(packets: 0, heldBytes: 0, dropped: 0, ignored: 1000))
        #expect(c.captured()?.media.count == 0)
    }

    @Test func heldBytesCountEveryPacketsHeaderAndItsChunk() {
        let c = SessionCapture(roomId: "r", recordsMedia: true)
        let header = [UInt8](repeating: 0x80, count: SessionCapture.minimumRTPBytes)
        // Headers alone (12 bytes each, no payload) still fill chunks: 1000 of them hold
        // 24,000 bytes in two chunks, where counting payload said 12,000.
        for _ in 0..<1000 {
            header.withUnsafeBytes {
                c.mediaPacket($0, sent: false, rtcp: false, local: Self.us, remote: Self.carrier, time: 1)
            }
        }
        let counts = c.mediaCounts
        #expect(counts.packets == 1000 && counts.ignored == 0)
        #expect(
            counts.heldBytes == 2 * (CapturedMedia.chunkBytes + CapturedMedia.allocationOverhead)
                + CapturedMedia.pairBytes)
        #expect(counts.heldBytes > 1000 * (SessionCapture.minimumRTPBytes + CapturedMedia.headerBytes))
    }

    /// One budget for all live captures: the second session gets what the first left, then
    /// both drop and count; an ended session gives its share back.
    @Test func liveCapturesShareOneBudget() {
        let chunk = CapturedMedia.chunkBytes + CapturedMedia.allocationOverhead
        var captures = SessionCaptures(retention: 300, maxLiveMediaBytes: 3 * chunk + 2 * CapturedMedia.pairBytes)
        let a = SessionCapture(roomId: "a", recordsMedia: true, budget: captures.liveBudget)
        let b = SessionCapture(roomId: "b", recordsMedia: true, budget: captures.liveBudget)
        captures.open(a)
        captures.open(b)
        let rtp = [UInt8](repeating: 0x80, count: 1000)
        func send(_ c: SessionCapture, _ n: Int) {
            for _ in 0..<n {
                rtp.withUnsafeBytes {
                    c.mediaPacket($0, sent: true, rtcp: false, local: Self.us, remote: Self.carrier, time: 1)
                }
            }
        }
        let perChunk = CapturedMedia.chunkBytes / 1012
        send(a, 2 * perChunk)  // two chunks
        send(b, 2 * perChunk)  // one fits, the second chunk does not
        #expect(a.mediaCounts.packets == 2 * perChunk && a.mediaCounts.dropped == 0)
        #expect(b.mediaCounts.packets == perChunk && b.mediaCounts.dropped == perChunk)
        send(a, 1)
        #expect(a.mediaCounts.dropped == 1, "the budget is spent for every session")
        #expect(
            captures.liveBudget.taken == a.mediaBytes + b.mediaBytes
                && captures.liveBudget.taken <= captures.liveBudget.limit)
        // a ends: its media leaves the live budget, and b may grow again.
        captures.ended(roomId: "a", now: 1)
        send(a, 1)
        #expect(a.mediaCounts.packets == 2 * perChunk, "an ended capture takes no more")
        send(b, perChunk)
        #expect(b.mediaCounts.packets == 2 * perChunk && captures.liveBudget.taken == b.mediaBytes)
    }

    /// A session's trace takes only its peers' messages: knowing its Call-ID is not enough,
    /// now or while the messages wait to be claimed.
    @Test func aStrangersMessagesWithTheCallIDStayOutOfTheTrace() {
        var captures = SessionCaptures(retention: 300)
        let stranger = SocketAddress(host: "203.0.113.66", port: 5060)
        func from(
            _ remote: SocketAddress, _ line: String, _ direction: SIPWireMessage.Direction = .received
        ) -> SIPWireMessage {
            var m = Self.message(line, callID: "in-1", direction)
            m.remote = remote
            return m
        }
        captures.sip(from(Self.carrier, "INVITE sip:+1555@10.0.0.5 SIP/2.0"))
        captures.sip(from(stranger, "BYE sip:+1555@10.0.0.5 SIP/2.0"))
        let c = SessionCapture(roomId: "r", recordsMedia: false)
        captures.open(c)
        captures.bind(callID: "in-1", to: c, peer: Self.carrier.host)
        captures.sip(from(stranger, "INFO sip:+1555@10.0.0.5 SIP/2.0"))
        captures.sip(from(stranger, "SIP/2.0 481 Call/Transaction Does Not Exist", .sent))
        captures.sip(from(Self.carrier, "SIP/2.0 200 OK", .sent))
        // We send a BYE to the caller's Contact: that host becomes a peer, its answer lands.
        let contact = SocketAddress(host: "192.0.2.11", port: 5070)
        captures.sip(from(contact, "BYE sip:caller@192.0.2.11 SIP/2.0", .sent))
        captures.sip(from(contact, "SIP/2.0 200 OK"))
        #expect(
            c.traceDocument().messages.map(\.firstLine) == [
                "INVITE sip:+1555@10.0.0.5 SIP/2.0", "SIP/2.0 200 OK",
                "BYE sip:caller@192.0.2.11 SIP/2.0", "SIP/2.0 200 OK"
            ])
        #expect(c.strangerMessages == 3)
    }

    /// The pcap a session gives: its SIP from the trace and its media, in time order, as
    /// Capture's reader reads them back.
    @Test func pcapHoldsTheTraceAndTheMediaInTimeOrder() throws {
        let c = SessionCapture(roomId: "r", recordsMedia: true)
        c.sip(Self.message("INVITE sip:+1555@192.0.2.10 SIP/2.0", callID: "x", at: 10))
        let rtp: [UInt8] =
            [0x80, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 160)
        rtp.withUnsafeBytes {
            c.mediaPacket(
                $0, sent: true, rtcp: false, local: SocketAddress(host: "10.0.0.5", port: 20000),
                remote: SocketAddress(host: "192.0.2.10", port: 30000), time: 10.5)
        }
        c.sip(Self.message("SIP/2.0 200 OK", callID: "x", .received, at: 10.2))
        let (sip, media, _) = try #require(c.captured())
        let stream = CaptureFile(sip: sip, media: media)
        // Streamed a record at a time (the smallest step), it is the same file as in one go,
        // of the length announced up front.
        var streamed: [UInt8] = []
        var steps = 0
        while stream.write(into: &streamed, upTo: 1) { steps += 1 }
        #expect(steps == 3, "the header, then one record a step (the last returns false)")
        let file = CaptureFile(sip: sip, media: media).bytes()
        #expect(streamed == file && file.count == stream.length)
        let packets = try PcapReader(bytes: file).packets
        #expect(packets.map(\.time) == [10, 10.2, 10.5])
        #expect(packets[0].source == Self.us && packets[0].destination == Self.carrier && packets[0].transport == .udp)
        #expect(packets[1].source == Self.carrier)
        #expect(packets[2].payload == rtp && packets[2].destination.port == 30000)
    }

    /// RTCP as HOMER reads it (HEP type 5): a real sender report from the media module.
    @Test func rtcpBecomesHOMERsJSON() throws {
        let block = RTCPReportBlock(
            ssrc: 0x1111, fractionLost: 12, cumulativeLost: 3, extendedHighestSequenceNumber: 70_000,
            interarrivalJitter: 40, lastSenderReport: 5, delaySinceLastSenderReport: 6)
        let sr = RTCPSenderReport(
            ssrc: 0x2222,
            senderInfo: RTCPSenderInfo(
                ntpTimestamp: NTPTimestamp(seconds: 100, fraction: 1 << 31),
                rtpTimestamp: 8000, packetCount: 50, octetCount: 8000),
            reportBlocks: [block])
        let bytes = try RTCPCompoundPacket(packets: [
            .senderReport(sr), .sourceDescription(RTCPSourceDescription(ssrc: 0x2222, cname: "c"))
        ])
        .serialize()
        let json = try #require(HEPSender.rtcpJSON(bytes))
        #expect(
            json.contains("\"type\":200") && json.contains("\"ssrc\":8738")
                && json.contains("\"ntp_timestamp_usec\":500000"))
        #expect(
            json.contains(
                "\"report_blocks\":[{\"source_ssrc\":4369,\"fraction_lost\":12,\"packets_lost\":3,\"highest_seq_no\":70000,\"ia_jitter\":40,\"lsr\":5,\"dlsr\":6}]"
            ))
        #expect(json.contains("\"sdes_ssrc\":8738"))
        #expect(HEPSender.rtcpJSON([1, 2, 3]) == nil)
    }

    /// The HEP tap, given at creation (a `let`: the media thread reads it without a lock),
    /// hears each RTCP packet with the session's Call-ID as it is then; RTP never.
    @Test func rtcpGoesToTheTapWithTheCurrentCallID() {
        let heard = Mutex<[(bytes: [UInt8], sent: Bool, callID: String?)]>([])
        let capture = SessionCapture(
            roomId: "r1", recordsMedia: false,
            onRTCP: { bytes, sent, _, _, _, callID in heard.withLock { $0.append((bytes, sent, callID)) } })
        #expect(capture.needsMediaTap)
        let rtcp: [UInt8] = [0x80, 201, 0, 1, 0, 0, 0x22, 0x22]
        func pass(_ bytes: [UInt8], rtcp: Bool, sent: Bool) {
            bytes.withUnsafeBytes {
                capture.mediaPacket($0, sent: sent, rtcp: rtcp, local: Self.us, remote: Self.carrier, time: 1)
            }
        }
        pass(rtcp, rtcp: true, sent: false)
        capture.callID = "first@h"
        pass(rtcp, rtcp: true, sent: true)
        pass([0x80, 0, 0, 1] + [UInt8](repeating: 0, count: 8), rtcp: false, sent: true)
        capture.callID = "second@h"
        pass(rtcp, rtcp: true, sent: false)
        let seen = heard.withLock { $0 }
        #expect(seen.map(\.callID) == [nil, "first@h", "second@h"])
        #expect(seen.map(\.sent) == [false, true, false] && seen.allSatisfy { $0.bytes == rtcp })
        #expect(!SessionCapture(roomId: "r2", recordsMedia: false).needsMediaTap)
    }
}
