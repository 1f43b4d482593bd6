import Testing

@testable import SIP

/// RFC 3261 §17.2.2 as a table: what arrives or is answered when, and what goes out.
@Suite struct NonInviteServerTransactionTests {
    static let udp = SIPPeer(transport: .udp, address: SocketAddress(host: "192.0.2.1", port: 5060))
    static let tcp = SIPPeer(transport: .tcp, address: SocketAddress(host: "192.0.2.1", port: 5060), connection: 7)

    enum Step: Sendable {
        case request(at: Double, expect: String)
        case respond(status: Int, at: Double, sent: Bool)
        case expire(at: Double, left: Int)
    }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var peer: SIPPeer = NonInviteServerTransactionTests.udp
        var steps: [Step]
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "retransmissions in Trying are absorbed",
            steps: [
                .request(at: 0, expect: "new"), .request(at: 0.5, expect: "absorbed"),
                .respond(status: 200, at: 1, sent: true)
            ]),
        Row(
            name: "Proceeding resends the 1xx, Completed the final",
            steps: [
                .request(at: 0, expect: "new"), .respond(status: 100, at: 0.1, sent: true),
                .request(at: 0.5, expect: "resend 100"),
                .respond(status: 200, at: 1, sent: true), .request(at: 2, expect: "resend 200")
            ]),
        Row(
            name: "a second final response is not sent",
            steps: [
                .request(at: 0, expect: "new"), .respond(status: 200, at: 0.1, sent: true),
                .respond(status: 500, at: 0.2, sent: false)
            ]),
        Row(
            name: "Timer J: 32 s after the final on UDP",
            steps: [
                .request(at: 0, expect: "new"), .respond(status: 404, at: 10, sent: true),
                .expire(at: 41.9, left: 1), .request(at: 41.95, expect: "resend 404"), .expire(at: 42.1, left: 0),
                .request(at: 43, expect: "new")
            ]),
        Row(
            name: "Timer J is 0 on TCP", peer: NonInviteServerTransactionTests.tcp,
            steps: [
                .request(at: 0, expect: "new"), .respond(status: 200, at: 0.1, sent: true), .expire(at: 0.1, left: 0)
            ]),
        Row(
            name: "never answered: gone after 64*T1",
            steps: [
                .request(at: 0, expect: "new"), .expire(at: 31.9, left: 1), .expire(at: 32.1, left: 0)
            ])
    ]

    @Test(arguments: rows) func steps(_ row: Row) {
        var table = NonInviteServerTransactions(t1: 0.5)
        var id: Int32?
        for (i, step) in row.steps.enumerated() {
            switch step {
            case .request(let at, let expect):
                let got: String
                switch table.received(key: "k", from: row.peer, now: at) {
                case .new(let newID):
                    id = newID
                    got = "new"
                case .retransmission(let resend, _):
                    got = resend.map { "resend " + String(decoding: $0, as: UTF8.self) } ?? "absorbed"
                }
                #expect(got == expect, "\(row.name), step \(i)")
            case .respond(let status, let at, let sent):
                let to = table.respond(id: id ?? 0, status: status, bytes: Array(String(status).utf8), now: at)
                #expect((to != nil) == sent, "\(row.name), step \(i)")
            case .expire(let at, let left):
                #expect(table.expire(now: at) == left, "\(row.name), step \(i)")
            }
        }
    }

    @Test func manyTransactionsExpireInOrderAndTheQueueStaysSmall() {
        var table = NonInviteServerTransactions(t1: 0.5)
        for i in 0..<10_000 {
            if case .new(let id) = table.received(key: "k\(i)", from: Self.udp, now: Double(i) * 0.001) {
                _ = table.respond(id: id, status: 200, bytes: [1], now: Double(i) * 0.001)
            }
        }
        #expect(table.count == 10_000)
        #expect(table.expire(now: 32 + 4.9995) == 5_000)
        #expect(table.expire(now: 100) == 0)
    }
}
