import Foundation
import SIP

/// Our parse+serialise path against osip's bare parse of the same messages, in one run.
enum ParseBench {
    /// Realistic trunk traffic: a carrier INVITE with SDP, its 100/180/183/200, ACK, BYE, OPTIONS.
    static let messages: [[UInt8]] = [
        """
        INVITE sip:+15550100001@127.0.0.1:5060;user=phone SIP/2.0\r
        Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-524287-1---8b9ac4c7f2a1d3e5;rport\r
        Max-Forwards: 69\r
        Record-Route: <sip:198.51.100.7;lr;ftag=as4f2b1c9e>\r
        Contact: <sip:+12125550123@198.51.100.7:5060;transport=udp>\r
        To: <sip:+15550100001@gw.example.net;user=phone>\r
        From: "ACME CORP" <sip:+12125550123@carrier.example.com;user=phone>;tag=as4f2b1c9e\r
        Call-ID: 3c26700857b6-4q4bjvryfkt2@carrier.example.com\r
        CSeq: 102 INVITE\r
        Allow: INVITE, ACK, CANCEL, OPTIONS, BYE, REFER, NOTIFY, UPDATE, PRACK\r
        Supported: 100rel, timer, replaces\r
        Session-Expires: 1800\r
        Min-SE: 90\r
        P-Asserted-Identity: <sip:+12125550123@carrier.example.com;user=phone>\r
        User-Agent: CarrierSBC 4.2\r
        Content-Type: application/sdp\r
        Content-Length: 259\r
        \r
        v=0\r
        o=- 1700000000 1700000000 IN IP4 198.51.100.20\r
        s=-\r
        c=IN IP4 198.51.100.20\r
        t=0 0\r
        m=audio 20000 RTP/AVP 0 8 101\r
        a=rtpmap:0 PCMU/8000\r
        a=rtpmap:8 PCMA/8000\r
        a=rtpmap:101 telephone-event/8000\r
        a=fmtp:101 0-16\r
        a=ptime:20\r
        a=sendrecv\r
        a=rtcp:20001\r

        """,
        """
        SIP/2.0 180 Ringing\r
        Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-524287-1---8b9ac4c7f2a1d3e5;rport=5060;received=198.51.100.7\r
        Record-Route: <sip:198.51.100.7;lr;ftag=as4f2b1c9e>\r
        Contact: <sip:irisgw@192.0.2.10:5060>\r
        To: <sip:+15550100001@gw.example.net;user=phone>;tag=7f3a9c21\r
        From: "ACME CORP" <sip:+12125550123@carrier.example.com;user=phone>;tag=as4f2b1c9e\r
        Call-ID: 3c26700857b6-4q4bjvryfkt2@carrier.example.com\r
        CSeq: 102 INVITE\r
        Server: irisgw/0.1\r
        Content-Length: 0\r
        \r

        """,
        """
        BYE sip:irisgw@192.0.2.10:5060 SIP/2.0\r
        Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-524287-1---77aa01;rport\r
        Max-Forwards: 70\r
        Route: <sip:198.51.100.7;lr;ftag=as4f2b1c9e>\r
        To: <sip:+15550100001@gw.example.net;user=phone>;tag=7f3a9c21\r
        From: "ACME CORP" <sip:+12125550123@carrier.example.com;user=phone>;tag=as4f2b1c9e\r
        Call-ID: 3c26700857b6-4q4bjvryfkt2@carrier.example.com\r
        CSeq: 103 BYE\r
        Reason: Q.850;cause=16;text="Normal call clearing"\r
        Content-Length: 0\r
        \r

        """,
        """
        OPTIONS sip:gw.example.net SIP/2.0\r
        Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-opt-1;rport\r
        Max-Forwards: 70\r
        To: <sip:gw.example.net>\r
        From: <sip:ping@carrier.example.com>;tag=p1\r
        Call-ID: ping-1@carrier.example.com\r
        CSeq: 1 OPTIONS\r
        Accept: application/sdp\r
        Content-Length: 0\r
        \r

        """
    ].map(withContentLength)

    /// Writes the real body size into `Content-Length: 0`-style placeholders.
    static func withContentLength(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: Array("\r\n\r\n".utf8)) }) else {
            return bytes
        }
        let body = bytes.count - end - 4
        var lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        for i in lines.indices where lines[i].hasPrefix("Content-Length:") { lines[i] = "Content-Length: \(body)" }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + bytes[(end + 4)...]
    }

    struct Result {
        var oursParsePerSecond: Double
        var oursParseSerializePerSecond: Double
        var osipParsePerSecond: Double
        var osipParseSerializePerSecond: Double
    }

    static func run(seconds: Double = 4) -> Result {
        for m in messages {
            precondition((try? SIPMessage.parse(m)) != nil && OSIPBaseline.parse(m), "bench message must parse")
        }
        // Parse includes our validation (Via, From, To, Contact, Route, CSeq ... checked).
        let oursParse: ([UInt8]) -> Int = { m in (try? SIPMessage.parse(m))?.headers.count ?? 0 }
        let ours: ([UInt8]) -> Int = { m in
            guard let parsed = try? SIPMessage.parse(m) else { return 0 }
            return parsed.serialize().count
        }
        let osip: ([UInt8]) -> Int = { OSIPBaseline.parse($0) ? 1 : 0 }
        let osipBoth: ([UInt8]) -> Int = { OSIPBaseline.parseAndSerialize($0) }
        // Interleave short rounds so load from other processes hits all three alike.
        var totals = [0.0, 0.0, 0.0, 0.0]
        var counts = [0, 0, 0, 0]
        let rounds = 40
        for _ in 0..<rounds {
            for (i, body) in [oursParse, ours, osip, osipBoth].enumerated() {
                let (n, t) = measure(seconds: seconds / Double(rounds * 4), body)
                counts[i] += n
                totals[i] += t
            }
        }
        let rate = (0..<4).map { Double(counts[$0]) / totals[$0] }
        return Result(
            oursParsePerSecond: rate[0], oursParseSerializePerSecond: rate[1],
            osipParsePerSecond: rate[2], osipParseSerializePerSecond: rate[3])
    }

    private static func measure(seconds: Double, _ body: ([UInt8]) -> Int) -> (Int, Double) {
        var sink = 0
        for _ in 0..<20 { for m in messages { sink &+= body(m) } }
        var count = 0
        let start = Date()
        var elapsed = 0.0
        repeat {
            for _ in 0..<25 {
                for m in messages { sink &+= body(m) }
            }
            count += 25 * messages.count
            elapsed = Date().timeIntervalSince(start)
        } while elapsed < seconds
        if sink == 42 { print("") }
        return (count, elapsed)
    }
}
