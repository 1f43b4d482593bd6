import CarrierSim
import Foundation
import Gateway
import IOCore
import IrisAPI
import TestSupport
import Testing

/// Session behaviour on a gateway built inside the test (`InProcessGateway`): the carrier
/// simulator's scripted numbers answer, refuse, hang up and hold, and each session's events
/// and call record say so. No binary is spawned; the sockets and SQLite are real.
@Suite struct InProcessSessionTests {
    /// Places a call from the app to `number` and returns the room.
    private func place(_ gw: InProcessGateway, _ app: AppLeg, to number: String) async throws -> SessionResponse {
        let request = CreateSessionRequest(targetTN: number, sourceTN: "+15557654321", media: app.offer)
        return try await gw.run { try $0.create(request) }
    }

    @Test func aCallIsAnsweredBridgedBothWaysAndRecorded() async throws {
        let gw = try InProcessGateway()
        let app = try AppLeg()
        let session = try await place(gw, app, to: "+15550100001")
        let room = session.roomId
        let platform = try #require(session.media?.sdp.flatMap { AppLeg.address(ofAnswer: $0) })
        #expect(await eventually(timeout: 10) { gw.reached(room, .connected) }, "\(gw.events(room).map(\.event))")

        // The simulator echoes what it hears: the app's tone comes back through both legs.
        var echoed = 0
        let heard = await eventually(timeout: 10) {
            app.sendFrame(to: platform)
            echoed += app.drain()
            return echoed >= 10
        }
        #expect(heard, "only \(echoed) packets came back")

        try await gw.run { try $0.close(roomId: room) }
        #expect(await eventually(timeout: 10) { gw.events(room).contains { $0.event == .onSessionEnded } })
        let ended = try #require(gw.events(room).last { $0.event == .onSessionEnded })
        #expect(ended.reason == .completed)
        #expect(await eventually(timeout: 10) { gw.gateway.records.record(roomId: room)?.endedAt != nil })
        let record = try #require(gw.gateway.records.record(roomId: room))
        #expect(record.direction == "outbound" && record.targetTN == "+15550100001" && record.answeredAt != nil)
        #expect(record.endReason == "completed")
        await gw.stop()
    }

    /// The simulator's refusals, as the app and the call record see them.
    @Test(arguments: [
        ("+15550100002", 486, 17, EndReason.busy),
        ("+15550100006", 603, 21, EndReason.declined),
        ("+15550100007", 404, 1, EndReason.failed)
    ])
    func aRefusalEndsTheSessionWithTheCarriersCodeAndCause(
        number: String, code: Int, cause: Int, reason: EndReason
    ) async throws {
        let gw = try InProcessGateway()
        let app = try AppLeg()
        let room = try await place(gw, app, to: number).roomId
        #expect(await eventually(timeout: 10) { gw.events(room).contains { $0.event == .onSessionEnded } })
        let ended = try #require(gw.events(room).last { $0.event == .onSessionEnded })
        #expect(ended.reason == reason, "\(ended)")
        #expect(ended.sip?.code == code && ended.sip?.cause == cause, "\(String(describing: ended.sip))")
        #expect(await eventually(timeout: 10) { gw.gateway.records.record(roomId: room)?.sipCode == code })
        #expect(gw.gateway.records.record(roomId: room)?.q850Cause == cause)
        await gw.stop()
    }

    @Test func aNumberOutsideTheAllowedPrefixesIsRefusedAndNothingIsSent() async throws {
        let gw = try InProcessGateway()
        let app = try AppLeg()
        await #expect(throws: GatewayError.self) { _ = try await place(gw, app, to: "+442079460000") }
        do {
            _ = try await place(gw, app, to: "+442079460000")
        } catch {
            #expect((error as? GatewayError)?.irisCode == IrisCode.callForbidden, "\(error)")
        }
        #expect(gw.gateway.list().isEmpty)
        #expect(gw.simulator.reports.isEmpty && gw.simulator.activeCalls == 0)
        await gw.stop()
    }

    @Test func theCarrierHangsUpAndTheSessionEndsCompleted() async throws {
        let gw = try InProcessGateway()
        let app = try AppLeg()
        let room = try await place(gw, app, to: "+15550100010").roomId
        #expect(await eventually(timeout: 10) { gw.events(room).contains { $0.event == .onSessionEnded } })
        let events = gw.events(room)
        #expect(events.contains { $0.event == .onSessionSIPStatus && $0.status == .connected })
        let ended = try #require(events.last { $0.event == .onSessionEnded })
        #expect(ended.reason == .completed && ended.sip?.cause == 16, "\(ended)")  // the BYE's Reason: Q.850;cause=16
        await gw.stop()
    }

    @Test func holdAndUnholdByTheAppAreReportedAndTheCallGoesOn() async throws {
        let gw = try InProcessGateway()
        let app = try AppLeg()
        let room = try await place(gw, app, to: "+15550100001").roomId
        #expect(await eventually(timeout: 10) { gw.reached(room, .connected) })
        try await gw.run { try $0.hold(roomId: room) }
        #expect(await eventually(timeout: 10) { gw.reached(room, .hold) })
        // Holding twice is refused and changes nothing.
        await #expect(throws: GatewayError.self) { try await gw.run { try $0.hold(roomId: room) } }
        try await gw.run { try $0.unhold(roomId: room) }
        #expect(
            await eventually(timeout: 10) {
                gw.events(room).last { $0.event == .onSessionSIPStatus }?.status == .connected
            })
        let snapshot = try await gw.run { try $0.snapshot(roomId: room) }
        #expect(snapshot.status == .connected)
        try await gw.run { try $0.close(roomId: room) }
        #expect(await eventually(timeout: 10) { gw.events(room).contains { $0.event == .onSessionEnded } })
        await gw.stop()
    }

    @Test func aCallFromThePSTNIsOfferedToTheAppJoinedAndRecorded() async throws {
        let gw = try InProcessGateway()
        let app = try AppLeg()
        var configuration = PSTNCaller.Configuration(did: "+15550001000", from: "+15553334444")
        configuration.gateway = gw.sipAddress
        configuration.hangupAfter = 1
        let caller = try PSTNCaller(configuration: configuration)
        async let outcomes = offThePool { (try? caller.run()) ?? [] }

        // The DID's route names routing id "alice": its notification carries the room token.
        var offered: SessionEvent?
        #expect(
            await eventually(timeout: 10) {
                offered = gw.gateway.list().lazy.flatMap { gw.events($0.roomId) }.first { $0.event == .onNotification }
                return offered != nil
            })
        let notification = try #require(offered)
        #expect(
            notification.routingid == "alice" && notification.userdata?.data.cid == "+15553334444", "\(notification)")
        let room = notification.roomId
        let token = try #require(notification.roomtoken)
        _ = try await gw.run { try $0.join(roomId: room, JoinRequest(roomToken: token, media: app.offer)) }
        #expect(await eventually(timeout: 10) { gw.reached(room, .connected) })

        // The caller hangs up after a second of audio; the call record keeps the inbound call.
        let results = await outcomes
        #expect(results.count == 1 && results[0].isSuccess, "\(results)")
        #expect(await eventually(timeout: 10) { gw.gateway.records.record(roomId: room)?.endedAt != nil })
        let record = try #require(gw.gateway.records.record(roomId: room))
        #expect(record.direction == "inbound" && record.sourceTN == "+15553334444" && record.answeredAt != nil)
        await gw.stop()
    }
}
