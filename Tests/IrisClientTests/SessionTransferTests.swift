import Foundation
import IrisAPI
import Synchronization
import TestSupport
import Testing

@testable import IrisClient

/// `transfer(to:)`, `transfer(replacing:)`, `acceptTransfer`, `declineTransfer` and the two
/// transfer events, against the fake gateway of `ServerScripts.fakeGateway` (Python): the
/// verbs' paths and bodies as it recorded them, its events decoded and handed to the delegate.
struct SessionTransferTests {
    /// What the delegate was told, in order.
    final class Recorder: IrisRtcAudioSessionDelegate, Sendable {
        struct Progress: Equatable, Sendable {
            var transfer: TransferInfo
            var sip: SIPDetails?
            var message: String?
        }
        private let heard = Mutex<(progress: [Progress], requests: [TransferInfo])>(([], []))
        var progress: [Progress] { heard.withLock { $0.progress } }
        var requests: [TransferInfo] { heard.withLock { $0.requests } }
        var states: [TransferState] { progress.map(\.transfer.state) }

        func onSessionTransfer(
            _ session: IrisRtcAudioSession, transfer: TransferInfo, sip: SIPDetails?, message: String?
        ) {
            heard.withLock { $0.progress.append(Progress(transfer: transfer, sip: sip, message: message)) }
        }
        func onSessionTransferRequest(_ session: IrisRtcAudioSession, transfer: TransferInfo) {
            heard.withLock { $0.requests.append(transfer) }
        }
    }

    /// One request the fake gateway recorded.
    struct Recorded: Equatable {
        var method: String
        var path: String
        /// The JSON body's string members; nil without a body.
        var body: [String: String]?
        var contentType: String
    }

    static func recorded(_ server: PythonServer) async throws -> [Recorded] {
        let client = try HTTPClient(baseURL: server.baseURL, defaultHeaders: ["Authorization": "Bearer key"])
        let response = try await client.request(method: "GET", path: "/requests", timeout: 5)
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: [[String: Any]]]
        return (json?["requests"] ?? []).map { r in
            Recorded(
                method: r["method"] as? String ?? "", path: r["path"] as? String ?? "",
                body: (r["body"] as? [String: Any])?.compactMapValues { $0 as? String },
                contentType: r["type"] as? String ?? "")
        }
    }

    /// An outbound session through the fake gateway, connected.
    static func connected(
        _ server: PythonServer, _ recorder: Recorder
    ) async throws -> IrisRtcAudioSession {
        let session = IrisRtcAudioSession(
            connection: try IrisRtcConnection(baseURL: server.baseURL, apiKey: "key"), stream: try IrisRtcStream(),
            delegate: recorder)
        try await offThePool { () throws(IrisError) in
            try session.createWithTN(targetTN: "+15550100001", sourceTN: "+15557654321")
        }
        #expect(await eventually(timeout: 5) { session.status == .connected }, "\(session.events)")
        return session
    }

    @Test func blindTransferPostsTheTargetAndReportsItsProgressToTheEnd() async throws {
        let server = try await PythonServer(source: ServerScripts.fakeGateway)
        defer { server.stop() }
        let recorder = Recorder()
        let session = try await Self.connected(server, recorder)
        defer { session.stop() }
        let room = try #require(session.roomId)
        try await offThePool { () throws(IrisError) in try session.transfer(to: "+15550100002") }
        #expect(await offThePool { session.waitForEnd(timeout: 5) })
        #expect(session.endedEvent?.reason == .transferred)

        let requests = try await Self.recorded(server)
        #expect(
            requests.last
                == Recorded(
                    method: "POST", path: "/v1/sessions/\(room)/transfer", body: ["targetTN": "+15550100002"],
                    contentType: "application/json"))
        let app = TransferInfo(state: .requested, by: "app", method: "refer", targetTN: "+15550100002")
        func at(_ state: TransferState) -> TransferInfo {
            var t = app
            t.state = state
            return t
        }
        #expect(
            recorder.progress == [
                .init(transfer: app),
                .init(transfer: at(.trying), sip: SIPDetails(code: 100, reason: "Trying")),
                .init(transfer: at(.ringing), sip: SIPDetails(code: 180, reason: "Ringing")),
                .init(transfer: at(.succeeded), sip: SIPDetails(code: 200, reason: "OK"))
            ])
        // onEvent saw them too, in order, with the end after them.
        #expect(
            session.events.map(\.event).suffix(6) == [
                .onSessionTransfer, .onSessionTransfer, .onSessionTransfer, .onSessionTransfer, .onSessionSIPStatus,
                .onSessionEnded
            ])
        #expect(recorder.requests.isEmpty)
    }

    @Test func aFailedTransferCarriesItsSIPCodeAndMessageAndTheCallStays() async throws {
        let server = try await PythonServer(source: ServerScripts.fakeGateway)
        defer { server.stop() }
        let recorder = Recorder()
        let session = try await Self.connected(server, recorder)
        defer { session.stop() }
        try await offThePool { () throws(IrisError) in try session.transfer(to: "+15550000486") }
        #expect(await eventually(timeout: 5) { recorder.states.last == .failed }, "\(recorder.progress)")
        #expect(recorder.states == [.requested, .trying, .failed])
        #expect(recorder.progress.last?.sip == SIPDetails(code: 486, reason: "Busy Here"))
        #expect(recorder.progress.last?.message == "the transfer target is busy")
        #expect(session.endedEvent == nil && session.status == .connected)
    }

    @Test func refusalsThrowTheGatewaysErrorAndAnUnstartedSessionThrowsAtOnce() async throws {
        let server = try await PythonServer(source: ServerScripts.fakeGateway)
        defer { server.stop() }
        let connection = try IrisRtcConnection(baseURL: server.baseURL, apiKey: "key")
        let idle = IrisRtcAudioSession(connection: connection, stream: try IrisRtcStream(), delegate: nil)
        defer { idle.stop() }
        #expect(throws: IrisError.state("the session has not started")) { try idle.transfer(to: "+15550100002") }
        #expect(throws: IrisError.state("the session has not started")) { try idle.acceptTransfer() }
        #expect(throws: IrisError.state("the session has not started")) { try idle.declineTransfer() }

        let recorder = Recorder()
        let session = try await Self.connected(server, recorder)
        defer { session.stop() }
        #expect(throws: IrisError.state("the other session has not started")) {
            try session.transfer(replacing: idle)
        }
        let forbidden = await offThePool { () -> IrisError? in
            do throws(IrisError) { try session.transfer(to: "+15550000403") } catch { return error }
            return nil
        }
        #expect(
            forbidden == .api(status: 403, code: IrisCode.callForbidden, message: "the trunk may not dial +15550000403")
        )
        #expect(forbidden?.irisCode == -417)
        // Nothing was sent for the client-side refusals; the gateway's refusal changed nothing.
        let paths = try await Self.recorded(server).map(\.path)
        #expect(paths.filter { $0.hasSuffix("/transfer") }.count == 1, "\(paths)")
        #expect(recorder.progress.isEmpty && session.endedEvent == nil)

        // A second transfer while the first one rings: 409.
        try await offThePool { () throws(IrisError) in try session.transfer(to: "+15550000180") }
        #expect(await eventually(timeout: 5) { recorder.states.last == .ringing }, "\(recorder.progress)")
        let second = await offThePool { () -> IrisError? in
            do throws(IrisError) { try session.transfer(to: "+15550100002") } catch { return error }
            return nil
        }
        #expect(second?.irisCode == IrisCode.incorrectState && second?.description.contains("409") == true)
        #expect(recorder.states == [.requested, .trying, .ringing] && session.endedEvent == nil)
    }

    @Test func attendedTransferNamesTheOtherSessionsRoom() async throws {
        let server = try await PythonServer(source: ServerScripts.fakeGateway)
        defer { server.stop() }
        let recorder = Recorder()
        let held = try await Self.connected(server, Recorder())
        defer { held.stop() }
        let consultation = try await Self.connected(server, recorder)
        defer { consultation.stop() }
        let heldRoom = try #require(held.roomId)
        let room = try #require(consultation.roomId)
        #expect(heldRoom != room)
        try await offThePool { () throws(IrisError) in try consultation.transfer(replacing: held) }
        #expect(await offThePool { consultation.waitForEnd(timeout: 5) })
        #expect(consultation.endedEvent?.reason == .transferred)
        #expect(
            try await Self.recorded(server).last
                == Recorded(
                    method: "POST", path: "/v1/sessions/\(room)/transfer", body: ["replacesRoomId": heldRoom],
                    contentType: "application/json"))
        #expect(recorder.states == [.requested, .trying, .ringing, .succeeded])
        #expect(recorder.progress.allSatisfy { $0.transfer.replacesRoomId == heldRoom && $0.transfer.targetTN == nil })
    }

    @Test func theCarriersRequestIsDeliveredAndAnsweredWithAcceptOrDecline() async throws {
        let server = try await PythonServer(source: ServerScripts.fakeGateway)
        defer { server.stop() }
        let recorder = Recorder()
        let session = IrisRtcAudioSession(
            connection: try IrisRtcConnection(baseURL: server.baseURL, apiKey: "key"), stream: try IrisRtcStream(),
            delegate: recorder)
        defer { session.stop() }
        try await offThePool { () throws(IrisError) in try session.join(roomId: "in-1", roomToken: "t") }
        #expect(await eventually(timeout: 5) { !recorder.requests.isEmpty }, "\(session.events)")
        #expect(
            recorder.requests == [
                TransferInfo(
                    state: .requested, by: "carrier", method: "dial", targetTN: "+15550100077",
                    referredBy: "<sip:+15557654321@carrier.example>")
            ])
        #expect(recorder.progress.isEmpty)

        try await offThePool { () throws(IrisError) in try session.acceptTransfer() }
        #expect(await eventually(timeout: 5) { recorder.states == [.trying] }, "\(recorder.progress)")
        try await offThePool { () throws(IrisError) in try session.declineTransfer() }
        #expect(await eventually(timeout: 5) { recorder.states == [.trying, .failed] }, "\(recorder.progress)")
        #expect(recorder.progress.last?.sip == SIPDetails(code: 603, reason: "Decline"))
        #expect(recorder.progress.last?.message == "declined by the app")

        // Both are bodiless POSTs on the session's path.
        let verbs = try await Self.recorded(server).suffix(2)
        #expect(
            Array(verbs) == [
                Recorded(method: "POST", path: "/v1/sessions/in-1/acceptTransfer", body: nil, contentType: ""),
                Recorded(method: "POST", path: "/v1/sessions/in-1/declineTransfer", body: nil, contentType: "")
            ])
    }
}
