/// SIPp scenarios written for these tests (the shared corpus has the others). Each is a
/// string so the test target needs no resources; `SIPp` writes it into its run folder.
enum Scenarios {
    /// SIPp as UAS: 100, 180, 486 Busy Here; waits for the ACK.
    static let busy = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="busy">
          <recv request="INVITE" crlf="true"/>
          <send><![CDATA[
        SIP/2.0 100 Trying
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <send><![CDATA[
        SIP/2.0 180 Ringing
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]busy[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Length: 0

        ]]></send>
          <send retrans="500"><![CDATA[
        SIP/2.0 486 Busy Here
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]busy[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <recv request="ACK"/>
        </scenario>
        """

    /// SIPp as UAS: 401 with a Digest challenge; the new INVITE must carry Authorization
    /// valid for alice/secret (SIPp `verifyauth`), else 403 and the call fails.
    static let challenge401 = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="challenge401">
          <recv request="INVITE" crlf="true"/>
          <send retrans="500"><![CDATA[
        SIP/2.0 401 Unauthorized
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]auth[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        WWW-Authenticate: Digest realm="irisgw.test", nonce="8f1e0c7a3b5d", algorithm=MD5
        Content-Length: 0

        ]]></send>
          <recv request="ACK"/>
          <recv request="INVITE">
            <action>
              <verifyauth assign_to="authvalid" username="alice" password="secret"/>
            </action>
          </recv>
          <nop hide="true" test="authvalid" next="authorized"/>
          <send><![CDATA[
        SIP/2.0 403 Forbidden
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]auth[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <recv request="ACK"/>
          <recv request="NEVER" timeout="100"/>
          <label id="authorized"/>
          <send retrans="500"><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]auth[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=callee 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000

        ]]></send>
          <recv request="ACK"/>
          <recv request="BYE"/>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
        </scenario>
        """

    /// SIPp as UAS: 100, 183 with an SDP answer (early media), then 200; waits for ACK and BYE.
    static let earlyMedia = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="early183">
          <recv request="INVITE" crlf="true"/>
          <send><![CDATA[
        SIP/2.0 100 Trying
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <send><![CDATA[
        SIP/2.0 183 Session Progress
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]early[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=callee 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000

        ]]></send>
          <pause milliseconds="200"/>
          <send retrans="500"><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]early[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=callee 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000

        ]]></send>
          <recv request="ACK"/>
          <recv request="BYE"/>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
        </scenario>
        """

    /// SIPp as UAS: 100, 180, then CANCEL: 200 to the CANCEL, 487 to the INVITE, waits for ACK.
    static let cancelWhileRinging = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="cancel487">
          <recv request="INVITE" crlf="true">
            <action>
              <ereg regexp=".*" search_in="hdr" header="CSeq:" assign_to="invite_cseq"/>
            </action>
          </recv>
          <send><![CDATA[
        SIP/2.0 100 Trying
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <send><![CDATA[
        SIP/2.0 180 Ringing
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]cancel[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Length: 0

        ]]></send>
          <recv request="CANCEL"/>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]cancel[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <send retrans="500"><![CDATA[
        SIP/2.0 487 Request Terminated
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]cancel[call_number]
        [last_Call-ID:]
        CSeq:[$invite_cseq]
        Content-Length: 0

        ]]></send>
          <recv request="ACK"/>
          <Reference variables="invite_cseq"/>
        </scenario>
        """

    /// SIPp as UAS: its first 200 to the INVITE is dropped (`lost="100"`) and the same 200
    /// goes out again 600 ms later, as a retransmission would. SIPp then holds back its 200
    /// to our BYE for 1.2 s, so our BYE must be retransmitted (Timer E) meanwhile (SIPp
    /// answers a retransmitted request by repeating its last message, the 200 to the INVITE,
    /// which we acknowledge again).
    static let lostResponses = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="lost200">
          <recv request="INVITE" crlf="true"/>
          <send><![CDATA[
        SIP/2.0 180 Ringing
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]lost[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Length: 0

        ]]></send>
          <send lost="100"><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]lost[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=callee 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000
        ]]></send>
          <pause milliseconds="600"/>
          <send retrans="500"><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=[pid]lost[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:callee@[local_ip]:[local_port]>
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=callee 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000
        ]]></send>
          <recv request="ACK"/>
          <recv request="BYE"/>
          <pause milliseconds="1200"/>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
        </scenario>
        """

    /// SIPp as UAC: a call, then a re-INVITE putting us on hold (`a=sendonly`); the 200 must
    /// answer `a=recvonly` (checked with a regexp); then BYE.
    static let holdReinvite = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="hold">
          <send retrans="500"><![CDATA[
        INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]hold[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>
        Call-ID: [call_id]
        CSeq: 1 INVITE
        Contact: <sip:sipp@[local_ip]:[local_port]>
        Max-Forwards: 70
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=sipp 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000
        a=sendrecv

        ]]></send>
          <recv response="100" optional="true"/>
          <recv response="180" optional="true"/>
          <recv response="200" rrs="true"/>
          <send><![CDATA[
        ACK [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]hold[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 1 ACK
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <send retrans="500"><![CDATA[
        INVITE [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]hold[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 2 INVITE
        Contact: <sip:sipp@[local_ip]:[local_port]>
        Max-Forwards: 70
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=sipp 1 2 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000
        a=sendonly

        ]]></send>
          <recv response="100" optional="true"/>
          <recv response="200">
            <action>
              <ereg regexp="a=recvonly" search_in="body" check_it="true" assign_to="answer_direction"/>
            </action>
          </recv>
          <send><![CDATA[
        ACK [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]hold[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 2 ACK
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <send retrans="500"><![CDATA[
        BYE [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]hold[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 3 BYE
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <recv response="200"/>
          <Reference variables="answer_direction"/>
        </scenario>
        """

    /// SIPp as UAC: its first ACK is dropped (`lost="100"` drops every copy, SIPp's repeats
    /// included), and the same ACK goes out 700 ms later, as if SIPp answered our 200
    /// retransmission; then BYE.
    static let lostACK = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="lostack">
          <send retrans="500"><![CDATA[
        INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]lostack[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>
        Call-ID: [call_id]
        CSeq: 1 INVITE
        Contact: <sip:sipp@[local_ip]:[local_port]>
        Max-Forwards: 70
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=sipp 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000

        ]]></send>
          <recv response="100" optional="true"/>
          <recv response="180" optional="true"/>
          <recv response="200" rrs="true"/>
          <send lost="100"><![CDATA[
        ACK [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]lostack[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 1 ACK
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <pause milliseconds="700"/>
          <send><![CDATA[
        ACK [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]lostack[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 1 ACK
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <send retrans="500"><![CDATA[
        BYE [next_url] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]lostack[call_number]
        To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 2 BYE
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <recv response="200"/>
        </scenario>
        """
}
