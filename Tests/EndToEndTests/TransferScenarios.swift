/// SIPp scenarios for the carrier's side of a transfer: a carrier (SIPp as UAS) that sends
/// REFERs in the gateway's call. Run them with `-aa`, so SIPp answers the gateway's NOTIFYs
/// 200 whenever they come (they interleave with the REFERs' answers).
enum TransferScenarios {
    /// The carrier answers the gateway's INVITE, then sends `count` REFERs in the dialog to
    /// `referTo`, one after the other (CSeq 1, 2, ...: SIPp's `[cseq]`), the first expecting
    /// `first`, the others `then`; then it waits for the gateway's BYE. The REFERs are a
    /// loop (SIPp refuses a scenario file over 64 kB).
    ///
    /// When the gateway dials the REFER's target (`targetNumber`) on the trunk, the INVITE
    /// comes to this SIPp as a second call, told apart by its To: that call rings (100, 180)
    /// until the gateway's CANCEL, so the transfer stays under way for the whole flood.
    static func referFlood(count: Int, first: Int, then: Int, referTo: String, targetNumber: String) -> String {
        let target = targetNumber.filter(\.isNumber)
        var s = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="refer-flood">
              <recv request="INVITE" crlf="true">
                <action>
                  <ereg regexp="sip:[^>;]*" search_in="hdr" header="Contact:" assign_to="contact"/>
                  <ereg regexp=".*" search_in="hdr" header="From:" assign_to="from"/>
                  <ereg regexp=".*" search_in="hdr" header="To:" assign_to="to"/>
                  <ereg regexp=".*" search_in="hdr" header="CSeq:" assign_to="invite_cseq"/>
                  <ereg regexp="\(target)@" search_in="hdr" header="To:" check_it="false" assign_to="target"/>
                </action>
              </recv>
            \(answer("100 Trying", toTag: false))
              <nop hide="true" test="target" next="target"/>
            \(answer("200 OK", sdp: CarrierScenarios.sdp(), retrans: true))
              <recv request="ACK"/>

            """
        s += refer(to: referTo) + "  <recv response=\"\(first)\"/>\n"
        if count > 1 {
            s += """
                  <nop hide="true"><action><assign assign_to="n" value="1"/></action></nop>
                  <label id="flood"/>
                \(refer(to: referTo))
                  <recv response="\(then)">
                    <action>
                      <add assign_to="n" value="1"/>
                      <test assign_to="more" variable="n" compare="less_than" value="\(count)"/>
                    </action>
                  </recv>
                  <nop hide="true" test="more" next="flood"/>

                """
        }
        s += """
              <recv request="BYE"/>
            \(answer("200 OK", toTag: false))
              <nop hide="true" next="end"/>
              <label id="target"/>
            \(answer("180 Ringing"))
              <recv request="CANCEL"/>
            \(answer("200 OK"))
            \(CarrierScenarios.inviteTerminated)  <label id="end"/>
            </scenario>

            """
        return s
    }

    /// A response to the last request (`[last_*]`), with our tag unless `toTag` is false
    /// (100 Trying, and answers to requests whose To carries the tag already).
    private static func answer(
        _ status: String, toTag: Bool = true, sdp: String? = nil, retrans: Bool = false
    ) -> String {
        let body = sdp.map { "Content-Type: application/sdp\nContent-Length: [len]\n\n\($0)" } ?? "Content-Length: 0\n"
        return """
              <send\(retrans ? " retrans=\"500\"" : "")><![CDATA[
            SIP/2.0 \(status)
            [last_Via:]
            [last_From:]
            [last_To:]\(toTag ? ";tag=[pid]c[call_number]" : "")
            [last_Call-ID:]
            [last_CSeq:]
            Contact: <sip:carrier@[local_ip]:[local_port]>
            \(body)
            ]]></send>
            """
    }

    /// A REFER in the dialog captured from the INVITE (the carrier is the UAS: From is the
    /// INVITE's To with our tag, To is the INVITE's From). `[branch]` is one per `<send>`, so
    /// the CSeq makes each of a loop's REFERs a transaction of its own.
    private static func refer(to number: String) -> String {
        """
          <send retrans="500"><![CDATA[
        REFER [$contact] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]-[cseq]
        From:[$to];tag=[pid]c[call_number]
        To:[$from]
        [last_Call-ID:]
        CSeq: [cseq] REFER
        Max-Forwards: 70
        Contact: <sip:carrier@[local_ip]:[local_port]>
        Refer-To: <sip:\(number)@[local_ip]:[local_port]>
        Referred-By: <sip:carrier@[local_ip]:[local_port]>
        Content-Length: 0

        ]]></send>

        """
    }
}
