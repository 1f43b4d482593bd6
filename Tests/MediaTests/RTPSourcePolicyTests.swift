import Glibc
import IOCore
import Testing

@testable import Media

/// The source policy as tables: scripted packets (from where, SSRC, whether their payload
/// type may latch, when) and the decision each must get; no socket, no clock.
@Suite struct RTPSourcePolicyTests {
    static let sdp = SocketAddress(host: "10.0.0.5", port: 4000)  // what the SDP said
    static let nat = SocketAddress(host: "203.0.113.7", port: 61000)  // where a NATed peer's media comes from
    static let stranger = SocketAddress(host: "198.51.100.9", port: 7000)
    static let moved = SocketAddress(host: "203.0.113.7", port: 61002)  // the peer's NAT after a rebinding

    enum Step: Sendable {
        /// A packet and the decision it must get.
        case packet(
            SocketAddress, ssrc: UInt32 = 0xAAAA, eligible: Bool = true, at: Double,
            RTPSourcePolicy<SocketAddress>.Decision)
        /// An offer/answer naming this address.
        case offerAnswer(SocketAddress)
    }

    struct Script: Sendable, CustomTestStringConvertible {
        let name: String
        var configuration = RTPSourcePolicyConfiguration()
        let steps: [Step]
        let destination: SocketAddress
        var testDescription: String { name }
    }

    static let scripts: [Script] = [
        Script(
            name: "packets from the SDP address latch at once",
            steps: [
                .packet(sdp, at: 0, .latched),
                .packet(sdp, at: 0.02, .accept)
            ], destination: sdp),
        Script(
            name: "NAT: the third packet in a row from the real address latches",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(nat, at: 0.02, .drop(.learning(count: 2))),
                .packet(nat, at: 0.04, .latched),
                .packet(nat, at: 0.06, .accept)
            ], destination: nat),
        Script(
            name: "one packet to latch when configured", configuration: .init(packetsToLatch: 1),
            steps: [
                .packet(nat, at: 0, .latched)
            ], destination: nat),
        Script(
            name: "a stranger never takes over from the SDP address, even after the peer's silence",
            steps: [
                .packet(sdp, at: 0, .latched),
                .packet(stranger, at: 3.0, .drop(.notThePeer)),
                .packet(stranger, at: 3.02, .drop(.notThePeer)),
                .packet(stranger, at: 3.04, .drop(.notThePeer)),
                .packet(stranger, at: 3.06, .drop(.notThePeer)),
                .packet(sdp, at: 3.5, .accept)
            ], destination: sdp),
        Script(
            name: "a stranger never takes over from a latched NAT address (hold, VAD)",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(nat, at: 0.02, .drop(.learning(count: 2))),
                .packet(nat, at: 0.04, .latched),
                .packet(stranger, at: 10, .drop(.notThePeer)),
                .packet(stranger, at: 10.02, .drop(.notThePeer)),
                .packet(stranger, at: 10.04, .drop(.notThePeer))
            ], destination: nat),
        Script(
            name: "the SDP address heard first: no other address may learn",
            steps: [
                .packet(sdp, at: 0, .latched),
                .packet(nat, at: 0.01, .drop(.notThePeer))
            ], destination: sdp),
        Script(
            name: "the SDP address speaking after a NAT latch takes the call back",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(nat, at: 0.02, .drop(.learning(count: 2))),
                .packet(nat, at: 0.04, .latched),
                .packet(sdp, at: 0.06, .latched),
                .packet(nat, at: 0.08, .drop(.notThePeer))
            ], destination: sdp),
        Script(
            name: "learning needs packets in a row: another source in between starts it over",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(stranger, at: 0.01, .drop(.learning(count: 1))),
                .packet(nat, at: 0.02, .drop(.learning(count: 1))),
                .packet(nat, at: 0.04, .drop(.learning(count: 2))),
                .packet(nat, at: 0.06, .latched)
            ], destination: nat),
        Script(
            name: "learning needs one SSRC",
            steps: [
                .packet(nat, ssrc: 1, at: 0, .drop(.learning(count: 1))),
                .packet(nat, ssrc: 2, at: 0.02, .drop(.learning(count: 1))),
                .packet(nat, ssrc: 2, at: 0.04, .drop(.learning(count: 2))),
                .packet(nat, ssrc: 2, at: 0.06, .latched)
            ], destination: nat),
        Script(
            name: "packets that may not latch neither learn nor break a run",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(nat, eligible: false, at: 0.01, .drop(.ineligible)),
                .packet(nat, at: 0.02, .drop(.learning(count: 2))),
                .packet(nat, at: 0.04, .latched)
            ], destination: nat),
        Script(
            name: "the learning window closes 5 s after the first packet",
            steps: [
                .packet(nat, at: 100, .drop(.learning(count: 1))),
                .packet(nat, at: 105.01, .drop(.windowClosed)),
                .packet(nat, at: 105.03, .drop(.windowClosed)),
                .packet(nat, at: 105.05, .drop(.windowClosed))
            ], destination: sdp),
        Script(
            name: "a re-INVITE opens a new window: the NATed peer re-latches after a rebinding",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(nat, at: 0.02, .drop(.learning(count: 2))),
                .packet(nat, at: 0.04, .latched),
                .packet(moved, at: 60, .drop(.notThePeer)),
                .offerAnswer(sdp),
                .packet(moved, at: 61, .drop(.learning(count: 1))),
                .packet(moved, at: 61.02, .drop(.learning(count: 2))),
                .packet(moved, at: 61.04, .latched),
                .packet(nat, at: 61.06, .drop(.notThePeer))
            ], destination: moved),
        Script(
            name: "after a re-INVITE the latched peer speaking again closes the window",
            steps: [
                .packet(nat, at: 0, .drop(.learning(count: 1))),
                .packet(nat, at: 0.02, .drop(.learning(count: 2))),
                .packet(nat, at: 0.04, .latched),
                .offerAnswer(sdp),
                .packet(nat, at: 30, .accept),
                .packet(stranger, at: 30.01, .drop(.notThePeer))
            ], destination: nat),
        Script(
            name: "a peer heard at its SDP address gets no window at a re-INVITE (hold): a stranger stays out",
            steps: [
                .packet(sdp, at: 0, .latched),
                .offerAnswer(sdp),
                .packet(stranger, at: 30, .drop(.notThePeer)),
                .packet(stranger, at: 30.02, .drop(.notThePeer)),
                .packet(stranger, at: 30.04, .drop(.notThePeer)),
                .packet(sdp, at: 33, .accept)
            ], destination: sdp),
        Script(
            name: "a re-INVITE to a new address forgets the old latch",
            steps: [
                .packet(sdp, at: 0, .latched),
                .offerAnswer(stranger),
                .packet(sdp, at: 1, .drop(.learning(count: 1))),
                .packet(stranger, at: 1.02, .latched)
            ], destination: stranger)
    ]

    @Test(arguments: scripts)
    func decisions(_ script: Script) {
        var policy = RTPSourcePolicy<SocketAddress>(signalledAddress: Self.sdp, configuration: script.configuration)
        #expect(policy.destination == Self.sdp)
        for (index, step) in script.steps.enumerated() {
            switch step {
            case .packet(let from, let ssrc, let eligible, let at, let expected):
                let decision = policy.packetReceived(from: from, ssrc: ssrc, eligible: eligible, now: at)
                #expect(decision == expected, "step \(index): from \(from) at \(at)")
            case .offerAnswer(let address):
                policy.signallingChanged(address: address)
            }
        }
        #expect(policy.destination == script.destination)
    }

    /// The C form the media path compares for every packet: the same endpoint, whichever
    /// family a dual-stack socket reports it in.
    @Test func rawAddressesCompareAsEndpoints() throws {
        let a = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: 4000)))
        let b = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: 4000)))
        let otherPort = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: 4002)))
        let otherHost = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.2", port: 4000)))
        let mapped = try #require(RawSocketAddress(SocketAddress(host: "::ffff:127.0.0.1", port: 4000)))
        let v6 = try #require(RawSocketAddress(SocketAddress(host: "::1", port: 4000)))
        #expect(a == b)
        let ea = try #require(a.endpoint), ev6 = try #require(v6.endpoint)
        let eOtherPort = try #require(otherPort.endpoint), eOtherHost = try #require(otherHost.endpoint)
        #expect(a != otherPort && ea.isSameHost(as: eOtherPort))
        #expect(a != otherHost && !ea.isSameHost(as: eOtherHost))
        #expect(a == mapped && mapped == a && ea == mapped.endpoint)
        #expect(a != v6 && !ea.isSameHost(as: ev6))
        #expect(v6 == RawSocketAddress(SocketAddress(host: "::1", port: 4000)))
        #expect(RawSocketAddress() == RawSocketAddress())
        #expect(RawSocketAddress() != a)
    }
}

/// The DTMF bucket: a burst, then the refill rate; a flood gets no more than the rate.
@Suite struct DTMFRateLimitTests {
    @Test func burstThenRate() {
        var limit = DTMFRateLimit(.init(burst: 20, perSecond: 10))
        let burst = (0..<30).filter { _ in limit.allow(now: 0) }.count
        #expect(burst == 20)
        let early = limit.allow(now: 0.05), refilled = limit.allow(now: 0.1), again = limit.allow(now: 0.1)
        #expect(!early && refilled && !again)
        // A person pressing a key every 200 ms is never dropped.
        var person = DTMFRateLimit()
        let kept = (0..<500).filter { person.allow(now: Double($0) * 0.2) }.count
        #expect(kept == 500)
    }

    @Test func floodGetsTheRate() {
        var limit = DTMFRateLimit()
        // 20,000 digits in 10 s: the burst plus 10 a second.
        let allowed = (0..<20_000).filter { limit.allow(now: Double($0) * 0.0005) }.count
        #expect(allowed >= 119 && allowed <= 121)
    }

    @Test func queueToTheOtherLegIsBounded() throws {
        var sender = DTMFSender(configuration: .init(maxQueued: 8))
        try sender.enqueue("12345678")
        #expect(throws: DTMFError.queueFull(limit: 8)) { try sender.enqueue("9") }
        #expect(sender.queuedCount == 8)
    }
}
