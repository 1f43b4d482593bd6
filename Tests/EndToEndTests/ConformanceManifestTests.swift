import Foundation
import TestSupport
import Testing

/// Every row of the shared SIPp MANIFEST.tsv is run by a test here (or is data one of them
/// uses); docs/conformance.md has the same table with the results.
@Suite(ConformanceCorpus.required)
struct ConformanceManifestTests {
    /// Manifest file → the test that runs it.
    static let coverage: [String: String] = [
        "pjproject/uac-options.xml": "InboundCallTests.optionsGets200",
        "pjproject/uac-inv-without-sdp.xml": "ConformanceInboundTests.pjprojectInviteWithoutSDP",
        "pjproject/uac-inv-multiple-require.xml": "ConformanceInboundTests.pjprojectMultipleRequire",
        "pjproject/uac-inv-retrans-after-ack.xml": "ConformanceInboundTests.pjprojectRetransmissionAfterACK",
        "pjproject/uac-183-wrong-codec.xml": "ConformanceInboundTests.pjprojectWrongCodecIs488",
        "pjproject/uac-prack-sdp-offer.xml": "ConformanceInboundTests.pjprojectPRACKWithOffer",
        "pjproject/uac-prack-sdp-decline.xml": "ConformanceInboundTests.pjprojectPRACKWithUnacceptableOffer",
        "pjproject/uac-upd-sdp-offer.xml": "ConformanceInboundTests.pjprojectEarlyUpdateWithOffer",
        "pjproject/uas-cancel-no-final.xml": "ConformanceOutboundTests.pjprojectCancelWithoutFinalResponse",
        "pjproject/uas-answer-183-wrong-codec.xml":
            "ConformanceOutboundTests.pjprojectEarlyAnswerWithWrongCodecIsCanceled",
        "pjproject/uas-answer-183-without-to-tag.xml":
            "ConformanceOutboundTests.pjprojectProvisionalWithoutToTagIsIgnored",
        "pjproject/uas-early-bye.xml": "ConformanceOutboundTests.pjprojectEarlyBye",
        "pjproject/uas-forked-100rel.xml": "ConformanceOutboundTests.pjprojectForked100rel",
        "pjproject/uas-auth.xml": "ConformanceOutboundTests.pjprojectRegisterWithChallengeWithoutNonce",
        "pjproject/uas-inv_401_retry_after_100.xml": "ConformanceOutboundTests.pjprojectChallengeAfterRinging",
        "pjproject/uas-reinv-with-less-media.xml": "ConformanceOutboundTests.pjprojectDoubleHold",
        "pjproject/uas-reinv-glare.xml": "ConformanceOutboundTests.pjprojectOfferGlareGets491",
        "pjproject/uas-timer-reinvite.xml": "ConformanceOutboundTests.pjprojectSessionRefreshByReinvite",
        "pjproject/uas-timer-update.xml": "ConformanceOutboundTests.pjprojectSessionRefreshByUpdate",
        "pjproject/uas-422-then-200-bad-se.xml": "ConformanceOutboundTests.pjproject422ThenSmallerSessionExpires",
        "asterisk-testsuite/hold__phone_B_duplicate_hold.xml": "ConformanceOutboundTests.asteriskDuplicateHold",
        "asterisk-testsuite/hold_inactive__phone_B_duplicate_hold.xml":
            "ConformanceOutboundTests.asteriskDuplicateHold",
        "asterisk-testsuite/hold_inject.csv": "ConformanceOutboundTests.asteriskDuplicateHold (-inf)",
        "asterisk-testsuite/rel100_incoming_require__check_100rel.xml":
            "ConformanceInboundTests.asteriskIncomingRequire100rel",
        "asterisk-testsuite/rel100_outgoing__check_100rel.xml": "ConformanceOutboundTests.asteriskOutgoing100rel",
        "asterisk-testsuite/session-timer-minse.xml": "ConformanceInboundTests.asteriskSessionTimerBelowMinSE",
        "asterisk-testsuite/bob_is_busy__receive-ipv4-udp.xml": "ConformanceOutboundTests.asteriskBusy",
        "asterisk-testsuite/call_canceled__call_cancel_valid_sdp.xml":
            "ConformanceOutboundTests.asteriskCancelRacesWith200",
        "asterisk-testsuite/early_media__ua1_invite_recv.xml":
            "ConformanceOutboundTests.asteriskEarlyMediaThenForked200",
        "drachtio-srf/uac-cancel.xml": "InboundCallTests.callerCancelsWhileRinging",
        "drachtio-srf/uas-cancel.xml": "ConformanceOutboundTests.drachtioCancel",
        "drachtio-srf/uac-prack.xml": "ConformanceInboundTests.drachtioUACPRACK",
        "drachtio-srf/uas-prack.xml": "ConformanceOutboundTests.drachtioPRACK",
        "drachtio-srf/uas-auth.xml": "ConformanceOutboundTests.drachtioProxyAuth",
        "drachtio-srf/uas-bye-with-auth.xml": "ConformanceOutboundTests.drachtioProxyAuth",
        "freeswitch/uac_digest_leak.xml": "ConformanceInboundTests.freeswitchDigestLeakIsRefused",
        "freeswitch/uas_407.xml": "ConformanceOutboundTests.freeswitchProxyAuth",
        "sipp/uac.xml": "ConformanceInboundTests.sippUAC",
        "sipp/uas.xml": "ConformanceOutboundTests.sippUAS",
        "sipp/uac_pcap.xml": "ConformanceInboundTests.sippUACWithPcapMedia",
        "sipp/pcap/g711a.pcap": "ConformanceInboundTests.sippUACWithPcapMedia (played)",
        "sipp/pcap/dtmf_2833_1.pcap": "ConformanceInboundTests.sippUACWithPcapMedia (played)"
    ]

    static var manifest: [String] {
        let path = SIPp.corpus.appendingPathComponent("MANIFEST.tsv").path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { $0.split(separator: "\t").first.map(String.init) }
    }

    @Test func everyManifestRowHasATest() {
        let rows = Self.manifest
        #expect(rows.count >= 42, "manifest missing under \(SIPp.corpus.path)")
        for row in rows {
            #expect(Self.coverage[row] != nil, "\(row) is in the manifest but no test runs it")
            #expect(
                FileManager.default.fileExists(atPath: SIPp.corpus.appendingPathComponent(row).path), "\(row) missing")
        }
        #expect(Set(Self.coverage.keys) == Set(rows), "coverage lists files the manifest does not")
    }
}
