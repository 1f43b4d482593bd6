import CarrierSim
import Media
import SDP
import SIP
import Testing

@Suite struct TestNumbersTests {
    @Test(arguments: [
        ("+15550100001", Behaviour.answerEcho),
        ("+15550100002", .reject(status: 486, reason: "Busy Here", q850: 17, text: "User busy")),
        ("+15550100003", .ringForever),
        ("+15550100004", .earlyMediaThenAnswer),
        ("+15550100005", .progressThenAnswer),
        ("+15550100006", .reject(status: 603, reason: "Decline", q850: 21, text: "Call rejected")),
        ("+15550100007", .reject(status: 404, reason: "Not Found", q850: 1, text: "Unallocated number")),
        ("+15550100008", .holdAndResume),
        ("+15550100009", .dtmf(digits: "1234#")),
        ("+15550100010", .remoteHangup),
        ("+15550100011", .reject(status: 503, reason: "Service Unavailable", q850: nil, text: nil)),
        ("+15550100012", .challenge),
        ("+15550100013", .reliableRinging),
        ("+15550100014", .preferG722),
        ("+15550100015", .silentAnswer),
        ("+15550100016", .oneWay),
        ("+15550100017", .lateMedia),
        ("+15550100018", .wrongCause),
        ("+15550100019", .codecMismatch),
        ("+15550100020", .endlessEarlyMedia),
        ("+15550100021", .ignoresACK),
        ("+15550100022", .slowTrying),
        ("+15550100023", .lossy),
        ("+15550100024", .transferAccept),
        ("+15550100025", .transferRefuse405),
        ("+15550100026", .transferRefuse603),
        ("+15550100027", .transferFailBusy),
        ("+15550100028", .transferOddNotify),
        ("+15550100029", .transferNoNotify),
        ("+15550100030", .refersCaller),
        ("+15550100031", .replacesCall),
        ("+15550100032", .answersAsPerson),
        ("+15550100033", .answersAsVoicemail),
        ("+15550100034", .answersAsFax)
    ])
    func eachNumberHasItsBehaviour(_ number: String, _ behaviour: Behaviour) {
        #expect(TestNumbers.behaviour(for: number) == behaviour)
    }

    @Test func tableHoldsExactlyTheThirtyFourNumbers() {
        let expected: [String] = (1...34).map { (n: Int) -> String in n < 10 ? "+155501000" + "0\(n)" : "+155501000\(n)"
        }
        #expect(TestNumbers.sortedNumbers == expected)
    }

    @Test func unlistedNumbersAnswerAndEcho() {
        #expect(TestNumbers.behaviour(for: "+15551230001") == .answerEcho)
        #expect(TestNumbers.behaviour(for: "") == .answerEcho)
        #expect(TestNumbers.behaviour(for: "+15550100099") == TestNumbers.defaultBehaviour)
    }

    @Test func onlyRejectionsAndEndlessRingingGoUnanswered() {
        let unanswered = TestNumbers.sortedNumbers.filter { !TestNumbers.behaviour(for: $0).answers }
        #expect(
            unanswered == [
                "+15550100002", "+15550100003", "+15550100006", "+15550100007", "+15550100011",
                "+15550100018", "+15550100020"
            ])
    }

    @Test func misbehavioursHaveTheirLogNames() {
        let names = (16...23).map { TestNumbers.behaviour(for: "+155501000\($0)").description }
        #expect(
            names == [
                "one-way", "late-media", "wrong-cause", "codec-mismatch", "endless-early-media", "ignores-ack",
                "slow-trying", "lossy"
            ])
    }

    @Test func transferNumbersHaveTheirLogNamesAndAnswer() {
        let behaviours = (24...31).map { TestNumbers.behaviour(for: "+155501000\($0)") }
        #expect(
            behaviours.map(\.description) == [
                "transfer-accept", "transfer-refuse-405", "transfer-refuse-603", "transfer-fail-486",
                "transfer-odd-notify", "transfer-no-notify", "refers-caller", "replaces-call"
            ])
        #expect(behaviours.allSatisfy { $0.answers })
    }

    @Test func answeringMachineNumbersHaveTheirLogNamesAndAnswer() {
        let behaviours = (32...34).map { TestNumbers.behaviour(for: "+155501000\($0)") }
        #expect(behaviours.map(\.description) == ["amd-person", "amd-voicemail", "amd-fax"])
        #expect(behaviours.allSatisfy { $0.answers })
    }
}

@Suite struct CodecChoiceTests {
    static func offer(_ codecs: [RTPMap], te: Bool = true) -> SessionDescription {
        TestSDP.offer(codecs: codecs, telephoneEvent: te)
    }

    @Test func firstSupportedCodecOfTheOfferWins() throws {
        let c = try #require(CodecChoice.choose(from: Self.offer([.g729, .pcma, .pcmu])))
        #expect(c.rtpMap == .pcma && c.codec == .pcma)
        #expect(c.telephoneEvent?.payloadType == 101)
    }

    @Test func g722OnlyWhenPreferredOrFirst() throws {
        #expect(CodecChoice.choose(from: Self.offer([.pcmu, .g722]))?.codec == .pcmu)
        #expect(CodecChoice.choose(from: Self.offer([.pcmu, .g722]), preferring: ["G722"])?.codec == .g722)
        #expect(CodecChoice.choose(from: Self.offer([.g722, .pcmu]))?.codec == .g722)
        // The preference falls back to the offer's order when the offer lacks G722.
        #expect(CodecChoice.choose(from: Self.offer([.pcma, .pcmu]), preferring: ["G722"])?.codec == .pcma)
        #expect(CodecChoice.choose(from: Self.offer([.g722]))?.sampleRate == 16_000)
    }

    @Test func dynamicPayloadTypesAreKeptAsOffered() throws {
        let pcmu96 = RTPMap(payloadType: 96, encodingName: "pcmu", clockRate: 8000)
        let c = try #require(CodecChoice.choose(from: Self.offer([pcmu96])))
        #expect(c.rtpMap.payloadType == 96 && c.codec == .pcmu)
    }

    @Test func noTelephoneEventUnlessOffered() {
        #expect(CodecChoice.choose(from: Self.offer([.pcmu], te: false))?.telephoneEvent == nil)
    }

    @Test func nothingWeSupportMeansNoChoice() {
        #expect(CodecChoice.choose(from: Self.offer([.g729])) == nil)
        var rejected = Self.offer([.pcmu])
        rejected.media[0].port = 0
        #expect(CodecChoice.choose(from: rejected) == nil)
    }
}
