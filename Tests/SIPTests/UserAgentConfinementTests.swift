import Testing

@testable import SIP

/// The user agent, its calls and the answering endpoint keep their mutable state in
/// `LoopBoundBox`es: reachable on the loop (and while it does not run), and a debug trap
/// off it, where before only their entry points asserted.
@Suite("SIP user agent confinement")
struct UserAgentConfinementTests {
    static func agent() throws -> SIPUserAgent {
        try SIPUserAgent(
            configuration: SIPUserAgentConfiguration(listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))]))
    }

    /// A call toward a port nothing answers (the INVITE is only retransmitted), on the loop.
    static func call(_ ua: SIPUserAgent) -> SIPCall {
        ua.loop.sync {
            let uri = SIPURI(user: "100", host: "127.0.0.1", port: 9)
            return ua.invite(
                requestURI: uri, from: NameAddress(uri: SIPURI(user: "caller", host: "127.0.0.1")),
                to: NameAddress(uri: uri),
                peer: SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: 9)),
                sdp: nil, delegate: nil)
        }
    }

    @Test("State is reached on the loop, and by the builder before the loop runs")
    func reachedWhereConfined() async throws {
        let ua = try Self.agent()
        // Before `start` the builder owns the loop: hooks and the endpoint are set up here.
        let endpoint = AnsweringEndpoint(ua: ua)
        endpoint.behaviour.ring = false
        #expect(ua.delegate === endpoint && endpoint.stats.received == 0 && ua.localAddresses.isEmpty)
        let bound = try ua.start()
        defer { ua.shutdown() }
        let call = Self.call(ua)
        let seen = await ua.loop.run {
            (
                ua.localAddresses == bound, ua.activeCallCount, call.state == .calling, call.delegate == nil,
                endpoint.behaviour.ring, ua.delegate === endpoint
            )
        }
        #expect(seen == (true, 1, true, true, false, true))
        await ua.loop.run { call.hangup() }
    }

    #if DEBUG
        enum Misuse: String, CaseIterable, Sendable, Codable {
            case agentCounters, agentDelegate, agentAddresses, endpointStats, endpointBehaviour, callState, callDelegate
        }

        @Test("State reached off the running loop traps in debug builds", arguments: Misuse.allCases)
        func misuseTraps(_ misuse: Misuse) async {
            await #expect(processExitsWith: .failure) { [misuse] in
                let ua = try Self.agent()
                let endpoint = AnsweringEndpoint(ua: ua)
                try ua.start()
                switch misuse {
                case .agentCounters: _ = ua.counters.received
                case .agentDelegate: ua.delegate = nil
                case .agentAddresses: _ = ua.localAddresses.count
                case .endpointStats: _ = endpoint.stats.received
                case .endpointBehaviour: endpoint.behaviour.ring = false
                case .callState: _ = Self.call(ua).state
                case .callDelegate: Self.call(ua).delegate = endpoint
                }
                // Only the misuse may trap: the agent ends on its loop, as it should.
                ua.shutdown()
                withExtendedLifetime(endpoint) {}
            }
        }
    #endif
}
