import Testing
@testable import Media

@Suite struct SymmetricRTPTests {
    static let sdp = RTPAddress(host: "10.0.0.5", port: 4000)      // what the SDP said (private)
    static let nat = RTPAddress(host: "203.0.113.7", port: 61000)  // where media really comes from
    static let other = RTPAddress(host: "198.51.100.9", port: 7000)

    /// One scripted packet: from where, SSRC, PT, when, and the decision expected.
    struct Step: Sendable {
        let from: RTPAddress
        var ssrc: UInt32 = 0xAAAA
        var payloadType: UInt8 = 0
        let at: Double
        let decision: SymmetricRTPLatch.Decision
    }

    struct Script: Sendable, CustomTestStringConvertible {
        let name: String
        var configuration = SymmetricRTPLatch.Configuration()
        var expectedSSRC: UInt32? = nil
        let steps: [Step]
        let destination: RTPAddress
        var testDescription: String { name }
    }

    static let scripts: [Script] = [
        Script(name: "packets from the SDP address latch at once", steps: [
            Step(from: sdp, at: 0, decision: .latch(sdp)),
            Step(from: sdp, at: 0.02, decision: .accept),
        ], destination: sdp),
        Script(name: "NAT: third packet from the real address latches", steps: [
            Step(from: nat, at: 0, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, at: 0.02, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, at: 0.04, decision: .latch(nat)),
            Step(from: nat, at: 0.06, decision: .accept),
        ], destination: nat),
        Script(name: "one packet to latch when configured", configuration: .init(packetsToLatch: 1), steps: [
            Step(from: nat, at: 0, decision: .latch(nat)),
        ], destination: nat),
        Script(name: "learning restarts when another address interleaves", steps: [
            Step(from: nat, at: 0, decision: .drop(.learning(nat, count: 1))),
            Step(from: other, at: 0.01, decision: .drop(.learning(other, count: 1))),
            Step(from: nat, at: 0.02, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, at: 0.04, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, at: 0.06, decision: .latch(nat)),
        ], destination: nat),
        Script(name: "learning restarts when the SSRC changes", steps: [
            Step(from: nat, at: 0, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, ssrc: 0xBBBB, at: 0.02, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, ssrc: 0xBBBB, at: 0.04, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, ssrc: 0xBBBB, at: 0.06, decision: .latch(nat)),
        ], destination: nat),
        Script(name: "unexpected payload type changes nothing", steps: [
            Step(from: sdp, payloadType: 34, at: 0, decision: .drop(.unexpectedPayloadType(34))),
            Step(from: nat, at: 0.02, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, payloadType: 99, at: 0.03, decision: .drop(.unexpectedPayloadType(99))),
            Step(from: nat, payloadType: 101, at: 0.04, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, at: 0.06, decision: .latch(nat)),
        ], destination: nat),
        Script(name: "known SSRC: strangers cannot latch", expectedSSRC: 0xAAAA, steps: [
            Step(from: other, ssrc: 0x666, at: 0, decision: .drop(.unexpectedSSRC(0x666))),
            Step(from: other, ssrc: 0x666, at: 0.02, decision: .drop(.unexpectedSSRC(0x666))),
            Step(from: other, ssrc: 0x666, at: 0.04, decision: .drop(.unexpectedSSRC(0x666))),
            Step(from: nat, at: 0.05, decision: .drop(.learning(nat, count: 1))),
        ], destination: sdp),
        Script(name: "no flapping while the latched address is active", steps: [
            Step(from: nat, at: 0, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, at: 0.02, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, at: 0.04, decision: .latch(nat)),
            Step(from: other, at: 0.05, decision: .drop(.latchedAddressActive(nat))),
            Step(from: other, at: 0.07, decision: .drop(.latchedAddressActive(nat))),
            Step(from: other, at: 0.09, decision: .drop(.latchedAddressActive(nat))),
            Step(from: other, at: 1.5, decision: .drop(.latchedAddressActive(nat))),
            Step(from: nat, at: 1.6, decision: .accept),
            Step(from: other, at: 3.0, decision: .drop(.latchedAddressActive(nat))),
        ], destination: nat),
        Script(name: "re-latch after the latched address fell silent", steps: [
            Step(from: sdp, at: 0, decision: .latch(sdp)),
            Step(from: sdp, at: 10, decision: .accept),
            Step(from: nat, at: 11.9, decision: .drop(.latchedAddressActive(sdp))),
            Step(from: nat, at: 12.0, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, at: 12.02, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, at: 12.04, decision: .latch(nat)),
            // Now the old address is the stranger.
            Step(from: sdp, at: 12.05, decision: .drop(.latchedAddressActive(nat))),
        ], destination: nat),
        Script(name: "old address speaking again stops a takeover", steps: [
            Step(from: sdp, at: 0, decision: .latch(sdp)),
            Step(from: nat, at: 5, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, at: 5.02, decision: .drop(.learning(nat, count: 2))),
            Step(from: sdp, at: 5.03, decision: .accept),
            Step(from: nat, at: 5.04, decision: .drop(.latchedAddressActive(sdp))),
        ], destination: sdp),
        Script(name: "re-latch needs the same SSRC by default", steps: [
            Step(from: sdp, at: 0, decision: .latch(sdp)),
            Step(from: nat, ssrc: 0xBBBB, at: 5, decision: .drop(.unexpectedSSRC(0xBBBB))),
            Step(from: nat, ssrc: 0xBBBB, at: 5.02, decision: .drop(.unexpectedSSRC(0xBBBB))),
            Step(from: nat, ssrc: 0xBBBB, at: 5.04, decision: .drop(.unexpectedSSRC(0xBBBB))),
        ], destination: sdp),
        Script(name: "failover to a new SSRC when allowed",
               configuration: .init(requireSameSSRCToRelatch: false), steps: [
            Step(from: sdp, at: 0, decision: .latch(sdp)),
            Step(from: nat, ssrc: 0xBBBB, at: 5, decision: .drop(.learning(nat, count: 1))),
            Step(from: nat, ssrc: 0xBBBB, at: 5.02, decision: .drop(.learning(nat, count: 2))),
            Step(from: nat, ssrc: 0xBBBB, at: 5.04, decision: .latch(nat)),
        ], destination: nat),
    ]

    @Test(arguments: scripts)
    func latching(_ script: Script) {
        var latch = SymmetricRTPLatch(
            signalledAddress: Self.sdp, payloadTypes: [0, 101], expectedSSRC: script.expectedSSRC,
            configuration: script.configuration)
        #expect(latch.destination == Self.sdp)
        for (index, step) in script.steps.enumerated() {
            let decision = latch.packetReceived(from: step.from, ssrc: step.ssrc, payloadType: step.payloadType, now: step.at)
            #expect(decision == step.decision, "step \(index)")
            #expect(decision.isAccepted == (step.decision == .accept || step.decision == .latch(step.from)))
        }
        #expect(latch.destination == script.destination)
    }

    @Test func newSignallingStartsOver() {
        var latch = SymmetricRTPLatch(signalledAddress: Self.sdp, payloadTypes: [0])
        _ = latch.packetReceived(from: Self.sdp, ssrc: 1, payloadType: 0, now: 0)
        #expect(latch.latchedAddress == Self.sdp)
        latch.signallingChanged(address: Self.other, payloadTypes: [8])
        #expect(latch.latchedAddress == nil)
        #expect(latch.expectedSSRC == nil)
        #expect(latch.destination == Self.other)
        #expect(latch.packetReceived(from: Self.sdp, ssrc: 1, payloadType: 0, now: 1) == .drop(.unexpectedPayloadType(0)))
        #expect(latch.packetReceived(from: Self.other, ssrc: 2, payloadType: 8, now: 1) == .latch(Self.other))
    }

    @Test func noSignalledAddressWaitsForMedia() {
        var latch = SymmetricRTPLatch(signalledAddress: nil)
        #expect(latch.destination == nil)
        _ = latch.packetReceived(from: Self.nat, ssrc: 1, payloadType: 96, now: 0)
        _ = latch.packetReceived(from: Self.nat, ssrc: 1, payloadType: 96, now: 0.02)
        #expect(latch.destination == nil)
        #expect(latch.packetReceived(from: Self.nat, ssrc: 1, payloadType: 96, now: 0.04) == .latch(Self.nat))
        #expect(latch.destination == Self.nat)
    }

    @Test func payloadTypeSet() {
        let set: RTPPayloadTypeSet = [0, 8, 63, 64, 101, 127]
        for pt in UInt8(0)...255 {
            #expect(set.contains(pt) == [0, 8, 63, 64, 101, 127].contains(pt))
        }
        #expect(RTPPayloadTypeSet([200]).isEmpty)
    }

    @Test(arguments: [
        (RTPAddress(host: "192.0.2.1", port: 5004), "192.0.2.1:5004"),
        (RTPAddress(host: "2001:db8::1", port: 5004), "[2001:db8::1]:5004"),
    ])
    func addressDescription(_ address: RTPAddress, _ text: String) {
        #expect(address.description == text)
    }
}
