// The little SDP the benches exchange with rtpengine and the gateway, written and read with
// the SDP module: the same bytes the benches wrote by hand before.

import Testing

@testable import irisgw_bench

struct BenchSDPTests {
    @Test(
        "the rtpengine offer and answer, line for line",
        arguments: [
            (
                nil, "PCMU/8000", 0 as UInt8,
                "v=0\r\no=- 3 1 IN IP4 127.0.0.1\r\ns=irisgw-bench\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"
                    + "a=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendrecv\r\n"
            ),
            (
                "useinbandfec=1", "opus/48000/1", 96,
                "v=0\r\no=- 3 1 IN IP4 127.0.0.1\r\ns=irisgw-bench\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 96\r\n"
                    + "a=rtpmap:96 opus/48000/1\r\na=fmtp:96 useinbandfec=1\r\na=ptime:20\r\na=sendrecv\r\n"
            )
        ] as [(String?, String, UInt8, String)])
    func audio(fmtp: String?, rtpmap: String, payloadType: UInt8, expected: String) {
        #expect(
            BenchSDP.audio(port: 4000, payloadType: payloadType, rtpmap: rtpmap, fmtp: fmtp, session: 3) == expected)
    }

    @Test("reads the audio stream and an encoding's payload type")
    func read() {
        let sdp =
            "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 5000 RTP/AVP 96\r\n"
            + "m=audio 30000 RTP/AVP 111 0 101\r\na=rtpmap:111 OPUS/48000/2\r\na=rtpmap:101 telephone-event/8000\r\n"
        #expect(BenchSDP.audioStream(sdp)?.port == 30000)
        #expect(BenchSDP.audioStream(sdp)?.payloadTypes == [111, 0, 101])
        #expect(BenchSDP.payloadType(of: "opus", in: sdp) == 111)
        #expect(BenchSDP.payloadType(of: "PCMA", in: sdp) == nil)
        #expect(BenchSDP.audioStream("not sdp") == nil)
        #expect(
            BridgeBench.offer(port: 4002) == "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                + "m=audio 4002 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ptime:20\r\n")
    }
}
