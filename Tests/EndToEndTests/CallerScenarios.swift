/// SIPp scenarios that play a PSTN caller (SIPp as UAC) reaching a DID through the trunk.
/// `[service]` is the DID (SIPp's `-s`).
enum CallerScenarios {
    private static let head = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    private static let from = "From: \"PSTN\" <sip:+15559876543@[local_ip]:[local_port]>;tag=[pid]p[call_number]"
    private static let to = "To: <sip:[service]@[remote_ip]:[remote_port]>"

    static func sdp(direction: String = "sendrecv", version: Int = 1) -> String {
        """
        v=0
        o=pstn 1 \(version) IN IP4 [local_ip]
        s=-
        c=IN IP4 [media_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0 101
        a=rtpmap:0 PCMU/8000
        a=rtpmap:101 telephone-event/8000
        a=fmtp:101 0-16
        a=ptime:20
        a=\(direction)

        """
    }

    private static func request(
        _ method: String, cseq: Int, toTag: Bool, sdp: String? = nil, via: String? = nil, retrans: Bool = true
    ) -> String {
        var lines = [
            "\(method) sip:[service]@[remote_ip]:[remote_port] SIP/2.0",
            via ?? "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
            from, to + (toTag ? "[peer_tag_param]" : ""), "Call-ID: [call_id]", "CSeq: \(cseq) \(method)",
            "Contact: <sip:+15559876543@[local_ip]:[local_port]>", "Max-Forwards: 70"
        ]
        if let sdp {
            lines += ["Content-Type: application/sdp", "Content-Length: [len]", "", sdp]
        } else {
            lines += ["Content-Length: 0", ""]
        }
        return "  <send\(retrans ? " retrans=\"500\"" : "")><![CDATA[\n" + lines.joined(separator: "\n")
            + "\n]]></send>\n"
    }

    private static let invite = request("INVITE", cseq: 1, toTag: false, sdp: sdp())
    private static let provisionals = """
          <recv response="100" optional="true"/>
          <recv response="180"/>

        """

    /// INVITE, then the final response `status` (not 2xx) and its ACK (same branch: the
    /// response's Via is the INVITE's).
    static func rejected(_ status: Int, ring: Bool = true) -> String {
        head + "<scenario name=\"caller-rejected\">\n" + invite
            + (ring ? provisionals : "  <recv response=\"100\" optional=\"true\"/>\n")
            + "  <recv response=\"\(status)\"/>\n"
            + request("ACK", cseq: 1, toTag: true, via: "[last_Via:]", retrans: false)
            + "</scenario>\n"
    }

    /// INVITE, 180, CANCEL after `afterMs`, 200 to the CANCEL, 487, ACK.
    static func cancels(afterMs: Int) -> String {
        head + "<scenario name=\"caller-cancel\">\n" + invite + provisionals
            + "  <pause milliseconds=\"\(afterMs)\"/>\n"
            + request("CANCEL", cseq: 1, toTag: false, via: "[last_Via:]")
            + "  <recv response=\"200\"/>\n  <recv response=\"487\"/>\n"
            + request("ACK", cseq: 1, toTag: true, via: "[last_Via:]", retrans: false)
            + "</scenario>\n"
    }

    /// A late offer (RFC 3261 §13.2.1): INVITE without SDP, 180, the 200 with the gateway's
    /// offer, the answer in the ACK; BYE after `talkMs`.
    static func lateOffer(talkMs: Int = 3000) -> String {
        head + "<scenario name=\"caller-late-offer\">\n" + request("INVITE", cseq: 1, toTag: false) + provisionals
            + "  <recv response=\"200\" rtd=\"true\"/>\n"
            + request("ACK", cseq: 1, toTag: true, sdp: sdp(), retrans: false)
            + "  <pause milliseconds=\"\(talkMs)\"/>\n"
            + request("BYE", cseq: 2, toTag: true)
            + "  <recv response=\"200\"/>\n</scenario>\n"
    }

    /// INVITE, 180, 200 (waits up to `answerTimeoutMs` for the app to join), ACK; then,
    /// if `hold`, a re-INVITE with `a=sendonly` and one with `a=sendrecv`, `holdMs` apart;
    /// BYE after `talkMs`.
    static func answered(talkMs: Int = 1500, hold: Bool = false, holdMs: Int = 1000) -> String {
        var s =
            head + "<scenario name=\"caller-answered\">\n" + invite + provisionals
            + "  <recv response=\"200\" rtd=\"true\"/>\n"
            + request("ACK", cseq: 1, toTag: true, retrans: false)
        if hold {
            s += "  <pause milliseconds=\"500\"/>\n"
            s += request("INVITE", cseq: 2, toTag: true, sdp: sdp(direction: "sendonly", version: 2))
            s += "  <recv response=\"100\" optional=\"true\"/>\n  <recv response=\"200\"/>\n"
            s += request("ACK", cseq: 2, toTag: true, retrans: false)
            s += "  <pause milliseconds=\"\(holdMs)\"/>\n"
            s += request("INVITE", cseq: 3, toTag: true, sdp: sdp(direction: "sendrecv", version: 3))
            s += "  <recv response=\"100\" optional=\"true\"/>\n  <recv response=\"200\"/>\n"
            s += request("ACK", cseq: 3, toTag: true, retrans: false)
        }
        s += "  <pause milliseconds=\"\(talkMs)\"/>\n"
        s += request("BYE", cseq: hold ? 4 : 2, toTag: true)
        s += "  <recv response=\"200\"/>\n</scenario>\n"
        return s
    }
}
