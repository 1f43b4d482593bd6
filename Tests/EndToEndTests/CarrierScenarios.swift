/// SIPp scenarios that play a carrier behind the gateway (SIPp as UAS), built from a few
/// parameters so each row of docs/events.md's SIP-to-event tables gets its own behaviour.
enum CarrierScenarios {
    private static func response(
        _ status: String, tag: String = "[pid]c[call_number]", sdp: String? = nil, extra: [String] = [],
        retrans: Bool = false
    ) -> String {
        var lines =
            [
                "SIP/2.0 \(status)", "[last_Via:]", "[last_From:]", "[last_To:];tag=\(tag)", "[last_Call-ID:]",
                "[last_CSeq:]",
                "Contact: <sip:carrier@[local_ip]:[local_port]>"
            ] + extra
        if let sdp {
            lines += ["Content-Type: application/sdp", "Content-Length: [len]", "", sdp]
        } else {
            lines += ["Content-Length: 0", ""]
        }
        return "  <send\(retrans ? " retrans=\"500\"" : "")><![CDATA[\n" + lines.joined(separator: "\n")
            + "\n]]></send>\n"
    }

    static func sdp(
        codec: (pt: Int, name: String) = (0, "PCMU"), direction: String = "sendrecv", telephoneEvent: Bool = true
    ) -> String {
        var s = """
            v=0
            o=carrier 1 1 IN IP4 [local_ip]
            s=-
            c=IN IP4 [media_ip]
            t=0 0
            m=audio [media_port] RTP/AVP \(codec.pt)\(telephoneEvent ? " 101" : "")
            a=rtpmap:\(codec.pt) \(codec.name)/8000

            """
        if telephoneEvent { s += "a=rtpmap:101 telephone-event/8000\na=fmtp:101 0-16\n" }
        s += "a=ptime:20\na=\(direction)\n"
        return s
    }

    private static let trying = response("100 Trying", tag: "").replacingOccurrences(of: ";tag=", with: "")
        .replacingOccurrences(of: "Contact: <sip:carrier@[local_ip]:[local_port]>\n", with: "")
    private static let head = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    /// The INVITE, capturing header values into SIPp variables (SIPp refuses a variable
    /// that is assigned and never used, so each scenario names only what it needs).
    private static func receiveInvite(capturing: [(variable: String, header: String, regexp: String)]) -> String {
        guard !capturing.isEmpty else { return "  <recv request=\"INVITE\" crlf=\"true\"/>\n" }
        return "  <recv request=\"INVITE\" crlf=\"true\">\n    <action>\n"
            + capturing.map {
                "      <ereg regexp=\"\($0.regexp)\" search_in=\"hdr\" header=\"\($0.header)\" assign_to=\"\($0.variable)\"/>\n"
            }.joined()
            + "    </action>\n  </recv>\n"
    }

    /// A request the carrier sends in the dialog (from the captured Contact, From and To),
    /// and its response (`expecting`, 200 by default).
    private static func inDialogRequest(
        _ method: String, cseq: Int, headers: [String], body: String? = nil, expecting: Int = 200
    ) -> String {
        var lines =
            [
                "\(method) [$contact] SIP/2.0", "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
                "From:[$to];tag=[pid]c[call_number]", "To:[$from]", "[last_Call-ID:]", "CSeq: \(cseq) \(method)",
                "Max-Forwards: 70"
            ]
            + headers
        lines += body.map { ["Content-Length: [len]", "", $0] } ?? ["Content-Length: 0", ""]
        return "  <send retrans=\"500\"><![CDATA[\n" + lines.joined(separator: "\n")
            + "\n]]></send>\n  <recv response=\"\(expecting)\"/>\n"
    }

    /// 100, optional 180, then a final failure with an optional Q.850 `Reason`; waits for ACK.
    static func reject(_ status: String, q850: Int? = nil, ring: Bool = true) -> String {
        head + "<scenario name=\"reject\">\n  <recv request=\"INVITE\" crlf=\"true\"/>\n" + trying
            + (ring ? response("180 Ringing") : "")
            + response(status, extra: q850.map { ["Reason: Q.850;cause=\($0);text=\"carrier\""] } ?? [], retrans: true)
            + "  <recv request=\"ACK\"/>\n</scenario>\n"
    }

    /// 100, 180 (or 183 with SDP for early media, optionally playing a pcap), answer after
    /// `answerAfterMs`; then either waits for our BYE or sends its own after `byeAfterMs`.
    static func answer(
        answerAfterMs: Int = 200, earlyMedia: Bool = false, playPcap: String? = nil,
        codec: (pt: Int, name: String) = (0, "PCMU"), byeAfterMs: Int? = nil, telephoneEvent: Bool = true,
        acceptHoldAndResume: Bool = false, playAfterAnswer: String? = nil, mediaAddress: String? = nil,
        infoDigit: String? = nil, recordRoute: Bool = false
    ) -> String {
        // Behind a record-routing proxy a UAS copies Record-Route into its 1xx and 2xx (RFC 3261 §12.1.1).
        let routed = recordRoute ? ["[last_Record-Route:]"] : []
        let dialog = [("contact", "Contact:", "sip:[^>;]*"), ("from", "From:", ".*"), ("to", "To:", ".*")]
        var s =
            head + "<scenario name=\"answer\">\n"
            + receiveInvite(capturing: byeAfterMs == nil && infoDigit == nil ? [] : dialog) + trying
        func describe(_ direction: String = "sendrecv") -> String {
            let text = sdp(codec: codec, direction: direction, telephoneEvent: telephoneEvent)
            guard let mediaAddress else { return text }
            // Media handled by the test itself (a real UDP socket), signalling by SIPp.
            let parts = mediaAddress.split(separator: ":")
            return text.replacingOccurrences(of: "[media_ip]", with: String(parts[0])).replacingOccurrences(
                of: "[media_port]", with: String(parts[1]))
        }
        let body = describe()
        s +=
            earlyMedia
            ? response("183 Session Progress", sdp: body, extra: routed) : response("180 Ringing", extra: routed)
        if let playPcap {
            s += "  <nop><action><exec play_pcap_audio=\"\(playPcap)\"/></action></nop>\n"
        }
        s += "  <pause milliseconds=\"\(answerAfterMs)\"/>\n"
        s += response("200 OK", sdp: body, extra: routed, retrans: true)
        s += "  <recv request=\"ACK\"/>\n"
        if let playAfterAnswer {
            s += "  <nop><action><exec play_pcap_audio=\"\(playAfterAnswer)\"/></action></nop>\n"
        }
        if let infoDigit {
            s += "  <pause milliseconds=\"300\"/>\n"
            s += inDialogRequest(
                "INFO", cseq: 1, headers: ["Content-Type: application/dtmf-relay"],
                body: "Signal=\(infoDigit)\nDuration=160\n")
        }
        if acceptHoldAndResume {
            // Our hold re-INVITE (sendonly) gets recvonly; the resume (sendrecv) gets sendrecv.
            for direction in ["recvonly", "sendrecv"] {
                s += "  <recv request=\"INVITE\"/>\n"
                s += response(
                    "200 OK",
                    sdp: describe(direction)
                        .replacingOccurrences(
                            of: "o=carrier 1 1", with: "o=carrier 1 \(direction == "recvonly" ? 2 : 3)"), retrans: true
                )
                .replacingOccurrences(of: "[last_To:];tag=[pid]c[call_number]", with: "[last_To:]")
                s += "  <recv request=\"ACK\"/>\n"
            }
        }
        if let byeAfterMs {
            s += "  <pause milliseconds=\"\(byeAfterMs)\"/>\n"
            s += inDialogRequest(
                "BYE", cseq: infoDigit == nil ? 1 : 2, headers: ["Reason: Q.850;cause=16;text=\"Normal call clearing\""]
            )
        } else {
            s +=
                "  <recv request=\"BYE\"/>\n"
                + response("200 OK", sdp: nil).replacingOccurrences(of: ";tag=[pid]c[call_number]", with: "")
        }
        return s + "</scenario>\n"
    }

    /// 100, 180, then rings until our CANCEL: 200 to it, 487 to the INVITE, waits for ACK.
    static let ringUntilCancel =
        head + "<scenario name=\"ring\">\n" + receiveInvite(capturing: [("invite_cseq", "CSeq:", ".*")]) + trying
        + response("180 Ringing") + "  <recv request=\"CANCEL\"/>\n"
        + response("200 OK") + inviteTerminated + "</scenario>\n"

    /// The 487 to a cancelled INVITE (its CSeq captured as `invite_cseq`), and the ACK.
    static let inviteTerminated = """
          <send retrans="500"><![CDATA[
        SIP/2.0 487 Request Terminated
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]c[call_number]
        [last_Call-ID:]
        CSeq:[$invite_cseq]
        Content-Length: 0

        ]]></send>
          <recv request="ACK"/>

        """

    /// Answers, then takes our REFER: `referStatus` to it, then these NOTIFYs (sipfrag status
    /// lines; the last `terminated` when `finalTerminated`), each answered by the gateway.
    /// Then it waits for our BYE (after a success, or when the test closes the call).
    static func takesRefer(
        referStatus: String, notifies: [String] = [], finalTerminated: Bool = true, notifyBefore202: Bool = false
    ) -> String {
        let dialog = [("contact", "Contact:", "sip:[^>;]*"), ("from", "From:", ".*"), ("to", "To:", ".*")]
        // The dialog's addresses only when NOTIFYs use them (SIPp refuses unused variables).
        var s = head + "<scenario name=\"takes-refer\">\n" + receiveInvite(capturing: notifies.isEmpty ? [] : dialog)
        s += trying
        s += response("200 OK", sdp: sdp(), retrans: true)
        s += "  <recv request=\"ACK\"/>\n"
        if notifies.isEmpty {
            // SIPp refuses a variable that is never used.
            s += "  <recv request=\"REFER\"/>\n"
        } else {
            s += "  <recv request=\"REFER\">\n    <action>\n"
            s += "      <ereg regexp=\"[0-9]+\" search_in=\"hdr\" header=\"CSeq:\" assign_to=\"refer_cseq\"/>\n"
            s += "    </action>\n  </recv>\n"
        }
        func notify(_ frag: String, cseq: Int, last: Bool) -> String {
            let state = last && finalTerminated ? "terminated;reason=noresource" : "active;expires=60"
            return inDialogRequest(
                "NOTIFY", cseq: cseq,
                headers: [
                    "Event: refer;id=[$refer_cseq]", "Subscription-State: \(state)",
                    "Content-Type: message/sipfrag;version=2.0"
                ], body: frag)
        }
        let refer = response(referStatus).replacingOccurrences(of: ";tag=[pid]c[call_number]", with: "")
        var cseq = 1
        if notifyBefore202, let first = notifies.first {
            s += notify(first, cseq: cseq, last: notifies.count == 1)
            cseq += 1
        }
        s += refer
        for (i, frag) in notifies.enumerated() where !(notifyBefore202 && i == 0) {
            s += notify(frag, cseq: cseq, last: i == notifies.count - 1)
            cseq += 1
        }
        s +=
            "  <recv request=\"BYE\"/>\n"
            + response("200 OK", sdp: nil).replacingOccurrences(of: ";tag=[pid]c[call_number]", with: "")
        return s + "</scenario>\n"
    }

    /// Answers, then sends these requests in the dialog one by one, each expecting its status
    /// (SIPp fails on any other), then waits for our BYE.
    static func sendsInDialog(
        _ requests: [(method: String, headers: [String], body: String?, expecting: Int)]
    ) -> String {
        let dialog = [("contact", "Contact:", "sip:[^>;]*"), ("from", "From:", ".*"), ("to", "To:", ".*")]
        var s = head + "<scenario name=\"in-dialog\">\n" + receiveInvite(capturing: dialog) + trying
        s += response("200 OK", sdp: sdp(), retrans: true) + "  <recv request=\"ACK\"/>\n"
        for (i, r) in requests.enumerated() {
            s += inDialogRequest(r.method, cseq: i + 1, headers: r.headers, body: r.body, expecting: r.expecting)
        }
        s +=
            "  <recv request=\"BYE\"/>\n"
            + response("200 OK", sdp: nil).replacingOccurrences(of: ";tag=[pid]c[call_number]", with: "")
        return s + "</scenario>\n"
    }
}
