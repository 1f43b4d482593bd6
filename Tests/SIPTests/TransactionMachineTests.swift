import Testing

@testable import SIP

/// The three transaction machines (RFC 3261 §17, RFC 6026) as tables: a run of events from a
/// fresh transaction, and the actions the last event gives, with the state it leaves. No
/// socket, no clock: timers are events. T1 = 0.5, T2 = 4, T4 = 5.
@Suite struct TransactionMachineTests {
    static let timers = TransactionTimers(t1: 0.5, t2: 4, t4: 5)

    // MARK: INVITE client

    typealias ICT = InviteClientTransaction
    struct ICTRow: Sendable, CustomTestStringConvertible {
        let name: String
        let reliable: Bool
        let events: [ICT.Event]
        let last: [ICT.Action]
        let state: ICT.State
        var testDescription: String { name }
    }

    static let ictRows: [ICTRow] = [
        .init(
            name: "start on UDP: send, Timer A at T1, Timer B at 64*T1", reliable: false, events: [.start],
            last: [.sendRequest, .schedule(.a, after: 0.5), .schedule(.b, after: 32)], state: .calling),
        .init(
            name: "start on TCP: no Timer A", reliable: true, events: [.start],
            last: [.sendRequest, .schedule(.b, after: 32)], state: .calling),
        .init(
            name: "Timer A doubles with no T2 cap", reliable: false,
            events: [.start, .timer(.a), .timer(.a), .timer(.a), .timer(.a)],
            last: [.sendRequest, .schedule(.a, after: 8)], state: .calling),
        .init(
            name: "Timer B in Calling: timeout to the TU", reliable: false, events: [.start, .timer(.b)],
            last: [.timeout, .terminated], state: .terminated),
        .init(
            name: "1xx: Proceeding, no more retransmissions", reliable: false, events: [.start, .response(status: 180)],
            last: [.cancel(.a), .cancel(.b), .passResponse(retransmission: false)], state: .proceeding),
        .init(
            name: "a second 1xx goes to the TU too", reliable: false,
            events: [.start, .response(status: 100), .response(status: 183)],
            last: [.passResponse(retransmission: false)], state: .proceeding),
        .init(
            name: "Timer A after a 1xx is stale", reliable: false, events: [.start, .response(status: 180), .timer(.a)],
            last: [], state: .proceeding),
        .init(
            name: "2xx: Accepted with Timer M (RFC 6026)", reliable: false,
            events: [.start, .response(status: 180), .response(status: 200)],
            last: [.cancel(.a), .cancel(.b), .passResponse(retransmission: false), .schedule(.m, after: 32)],
            state: .accepted),
        .init(
            name: "a 2xx again in Accepted goes to the TU as a retransmission", reliable: false,
            events: [.start, .response(status: 200), .response(status: 200)],
            last: [.passResponse(retransmission: true)], state: .accepted),
        .init(
            name: "a second 2xx of another fork reaches the TU too", reliable: false,
            events: [.start, .response(status: 200), .response(status: 202)],
            last: [.passResponse(retransmission: true)], state: .accepted),
        .init(
            name: "a non-2xx after the 2xx is absorbed", reliable: false,
            events: [.start, .response(status: 200), .response(status: 486)],
            last: [], state: .accepted),
        .init(
            name: "Timer M ends Accepted", reliable: false, events: [.start, .response(status: 200), .timer(.m)],
            last: [.terminated], state: .terminated),
        .init(
            name: "300-699: ACK, response to the TU, Timer D 32 s on UDP", reliable: false,
            events: [.start, .response(status: 486)],
            last: [.cancel(.a), .cancel(.b), .sendACK, .passResponse(retransmission: false), .schedule(.d, after: 32)],
            state: .completed),
        .init(
            name: "Timer D is 0 on TCP", reliable: true,
            events: [.start, .response(status: 180), .response(status: 603)],
            last: [.cancel(.a), .cancel(.b), .sendACK, .passResponse(retransmission: false), .schedule(.d, after: 0)],
            state: .completed),
        .init(
            name: "a retransmitted final in Completed gets the ACK again, not the TU", reliable: false,
            events: [.start, .response(status: 486), .response(status: 486)], last: [.sendACK], state: .completed),
        .init(
            name: "Timer D ends Completed", reliable: false, events: [.start, .response(status: 486), .timer(.d)],
            last: [.terminated], state: .terminated),
        .init(
            name: "a transport error in Calling goes to the TU", reliable: false, events: [.start, .transportError],
            last: [.cancel(.a), .cancel(.b), .transportError, .terminated], state: .terminated),
        .init(
            name: "a transport error in Proceeding goes to the TU", reliable: true,
            events: [.start, .response(status: 100), .transportError],
            last: [.cancel(.a), .cancel(.b), .transportError, .terminated], state: .terminated),
        .init(
            name: "a transport error in Accepted just ends it", reliable: false,
            events: [.start, .response(status: 200), .transportError],
            last: [.cancel(.m), .cancel(.d), .terminated], state: .terminated)
    ]

    @Test(arguments: ictRows)
    func inviteClient(_ row: ICTRow) {
        var machine = ICT(reliable: row.reliable, timers: Self.timers)
        var last: [ICT.Action] = []
        for event in row.events { last = machine.handle(event) }
        #expect(last == row.last)
        #expect(machine.state == row.state)
    }

    // MARK: Non-INVITE client

    typealias NICT = NonInviteClientTransaction
    struct NICTRow: Sendable, CustomTestStringConvertible {
        let name: String
        let reliable: Bool
        let events: [NICT.Event]
        let last: [NICT.Action]
        let state: NICT.State
        var testDescription: String { name }
    }

    static let nictRows: [NICTRow] = [
        .init(
            name: "start on UDP: Timer E at T1, F at 64*T1", reliable: false, events: [.start],
            last: [.sendRequest, .schedule(.e, after: 0.5), .schedule(.f, after: 32)], state: .trying),
        .init(
            name: "start on TCP: no Timer E", reliable: true, events: [.start],
            last: [.sendRequest, .schedule(.f, after: 32)], state: .trying),
        .init(
            name: "Timer E doubles up to T2", reliable: false,
            events: [.start, .timer(.e), .timer(.e), .timer(.e), .timer(.e)],
            last: [.sendRequest, .schedule(.e, after: 4)], state: .trying),
        .init(
            name: "Timer E at T2 once provisional", reliable: false,
            events: [.start, .response(status: 100), .timer(.e)],
            last: [.sendRequest, .schedule(.e, after: 4)], state: .proceeding),
        .init(
            name: "Timer F: timeout to the TU", reliable: false, events: [.start, .response(status: 100), .timer(.f)],
            last: [.cancel(.e), .timeout, .terminated], state: .terminated),
        .init(
            name: "final: to the TU, Timer K at T4 on UDP", reliable: false, events: [.start, .response(status: 200)],
            last: [.cancel(.e), .cancel(.f), .passResponse(retransmission: false), .schedule(.k, after: 5)],
            state: .completed),
        .init(
            name: "Timer K is 0 on TCP", reliable: true, events: [.start, .response(status: 404)],
            last: [.cancel(.e), .cancel(.f), .passResponse(retransmission: false), .schedule(.k, after: 0)],
            state: .completed),
        .init(
            name: "a retransmitted final is absorbed", reliable: false,
            events: [.start, .response(status: 200), .response(status: 200)],
            last: [], state: .completed),
        .init(
            name: "Timer K ends it", reliable: false, events: [.start, .response(status: 200), .timer(.k)],
            last: [.terminated], state: .terminated),
        .init(
            name: "a transport error goes to the TU", reliable: true, events: [.start, .transportError],
            last: [.cancel(.e), .cancel(.f), .transportError, .terminated], state: .terminated)
    ]

    @Test(arguments: nictRows)
    func nonInviteClient(_ row: NICTRow) {
        var machine = NICT(reliable: row.reliable, timers: Self.timers)
        var last: [NICT.Action] = []
        for event in row.events { last = machine.handle(event) }
        #expect(last == row.last)
        #expect(machine.state == row.state)
    }

    // MARK: INVITE server

    typealias IST = InviteServerTransaction
    struct ISTRow: Sendable, CustomTestStringConvertible {
        let name: String
        let reliable: Bool
        let events: [IST.Event]
        let last: [IST.Action]
        let state: IST.State
        var testDescription: String { name }
    }

    static let istRows: [ISTRow] = [
        .init(
            name: "a retransmission before any response is absorbed", reliable: false, events: [.retransmission],
            last: [], state: .proceeding),
        .init(
            name: "1xx from the TU is sent", reliable: false, events: [.respond(status: 100)], last: [.sendResponse],
            state: .proceeding),
        .init(
            name: "a retransmission in Proceeding gets the last 1xx", reliable: false,
            events: [.respond(status: 180), .retransmission],
            last: [.resendLastResponse], state: .proceeding),
        .init(
            name: "2xx: Accepted with Timer L (RFC 6026)", reliable: false,
            events: [.respond(status: 100), .respond(status: 200)],
            last: [.sendResponse, .schedule(.l, after: 32)], state: .accepted),
        .init(
            name: "Accepted keeps the INVITE retransmitted from the TU and resends the 2xx", reliable: false,
            events: [.respond(status: 200), .retransmission], last: [.resendLastResponse], state: .accepted),
        .init(
            name: "Accepted hands the ACK for the 2xx to the TU", reliable: false,
            events: [.respond(status: 200), .ack],
            last: [.passACK], state: .accepted),
        .init(
            name: "Accepted sends the TU's 2xx retransmissions", reliable: false,
            events: [.respond(status: 200), .respond(status: 200)],
            last: [.sendResponse], state: .accepted),
        .init(
            name: "Accepted drops a non-2xx from the TU", reliable: false,
            events: [.respond(status: 200), .respond(status: 500)],
            last: [], state: .accepted),
        .init(
            name: "Timer L ends Accepted", reliable: false, events: [.respond(status: 200), .timer(.l)],
            last: [.terminated], state: .terminated),
        .init(
            name: "300-699 on UDP: Timer G at T1, H at 64*T1", reliable: false, events: [.respond(status: 486)],
            last: [.sendResponse, .schedule(.g, after: 0.5), .schedule(.h, after: 32)], state: .completed),
        .init(
            name: "300-699 on TCP: no Timer G", reliable: true, events: [.respond(status: 486)],
            last: [.sendResponse, .schedule(.h, after: 32)], state: .completed),
        .init(
            name: "Timer G doubles up to T2", reliable: false,
            events: [.respond(status: 486), .timer(.g), .timer(.g), .timer(.g), .timer(.g)],
            last: [.resendLastResponse, .schedule(.g, after: 4)], state: .completed),
        .init(
            name: "a retransmission in Completed gets the final again", reliable: false,
            events: [.respond(status: 486), .retransmission],
            last: [.resendLastResponse], state: .completed),
        .init(
            name: "the ACK confirms: Timer I at T4 on UDP", reliable: false, events: [.respond(status: 486), .ack],
            last: [.cancel(.g), .cancel(.h), .schedule(.i, after: 5)], state: .confirmed),
        .init(
            name: "Timer I is 0 on TCP", reliable: true, events: [.respond(status: 486), .ack],
            last: [.cancel(.g), .cancel(.h), .schedule(.i, after: 0)], state: .confirmed),
        .init(
            name: "Confirmed absorbs ACKs", reliable: false, events: [.respond(status: 486), .ack, .ack], last: [],
            state: .confirmed),
        .init(
            name: "Timer I ends Confirmed", reliable: false, events: [.respond(status: 486), .ack, .timer(.i)],
            last: [.terminated], state: .terminated),
        .init(
            name: "Timer H: no ACK came", reliable: false, events: [.respond(status: 486), .timer(.h)],
            last: [.cancel(.g), .terminated], state: .terminated),
        .init(
            name: "a stale Timer G after the ACK does nothing", reliable: false,
            events: [.respond(status: 486), .ack, .timer(.g)],
            last: [], state: .confirmed)
    ]

    @Test(arguments: istRows)
    func inviteServer(_ row: ISTRow) {
        var machine = IST(reliable: row.reliable, timers: Self.timers)
        var last: [IST.Action] = []
        for event in row.events { last = machine.handle(event) }
        #expect(last == row.last)
        #expect(machine.state == row.state)
    }

    /// The configured values reach the timers: T1 0.1 makes 64*T1 6.4 s, T2 and T4 as given.
    @Test func configuredTimersReachEveryMachine() {
        let timers = TransactionTimers(t1: 0.1, t2: 1, t4: 2)
        var ict = ICT(reliable: false, timers: timers)
        #expect(ict.handle(.start) == [.sendRequest, .schedule(.a, after: 0.1), .schedule(.b, after: 6.4)])
        var nict = NICT(reliable: false, timers: timers)
        _ = nict.handle(.start)
        for _ in 0..<4 { _ = nict.handle(.timer(.e)) }
        #expect(nict.handle(.timer(.e)) == [.sendRequest, .schedule(.e, after: 1)])
        #expect(nict.handle(.response(status: 200)).contains(.schedule(.k, after: 2)))
        var ist = IST(reliable: false, timers: timers)
        #expect(ist.handle(.respond(status: 200)) == [.sendResponse, .schedule(.l, after: 6.4)])
    }
}
