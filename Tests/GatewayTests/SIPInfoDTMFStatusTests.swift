import Gateway
import Media
import Testing

/// Media classifies an unusable INFO DTMF body; the SIP edge (Gateway) names its status.
@Test(
    arguments: [
        (SIPInfoDTMFError.unsupportedContentType("text/plain"), 415), (.notText, 400), (.missingSignal, 400),
        (.invalidSignal("E"), 400), (.invalidDuration("0"), 400)
    ] as [(SIPInfoDTMFError, Int)])
func infoDTMFRefusalsMapToSIPStatuses(_ error: SIPInfoDTMFError, _ status: Int) {
    #expect(error.sipStatus == status)
}
