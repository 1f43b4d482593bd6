import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

/// Findings of outside peers, replayed with a real outside SIP stack as the caller: baresip
/// (`Baresip.swift`) dials the DID of a real `irisgw serve` from 127.0.0.1, the route of the
/// harness's default profile.
extension GatewaySuites {
    @Suite(
        .enabled(if: Baresip.isInstalled, "needs baresip (Debian baresip) with its srtp, ausine and aubridge modules"))
    struct OutsidePeerTests {
        static let did = "+15550001000"
        static let caller = "+15559876543"

        static func dial(_ gw: GatewayProcess) -> String { "sip:\(did)@127.0.0.1:\(gw.sipPort)" }

        /// A counter without labels from the gateway's `/metrics`; nil when absent.
        static func metric(_ gw: GatewayProcess, _ name: String) async -> Int? {
            guard
                let r = try? await HTTPClient(
                    baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey]
                )
                .request(method: "GET", path: "/metrics", timeout: 5)
            else { return nil }
            return String(decoding: r.body, as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix(name + " ") }.flatMap { Int($0.dropFirst(name.count + 1)) }
        }

        /// baresip with `mediaenc=srtp-mand` offers RTP/SAVP with `a=crypto` (SRTP or no
        /// call, RFC 4568). We cannot do SRTP, and a 200 with RTP/AVP is what RFC 3264 §6
        /// forbids: baresip gets 488 with `Warning: 302`, ACKs it and closes the call; the
        /// gateway counted the INVITE and started no session.
        @Test func baresipWithMandatorySRTPGets488() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let phone = try await Baresip(account: .init(user: Self.caller, mediaenc: "srtp-mand"), dial: Self.dial(gw))
            defer { phone.stop() }

            #expect(await phone.waitFor("session closed: 488 Not Acceptable Here"), phone.report)
            let offer = try #require(phone.invites.first, phone.report).body
            #expect(
                offer.contains(" RTP/SAVP ") && offer.contains("a=crypto:"),
                "baresip's offer was not SRTP-only: \(offer)")
            let finals = phone.inviteResponses.filter { ($0.statusCode ?? 0) >= 200 }
            let final = try #require(finals.first, phone.report)
            #expect(final.statusCode == 488 && final.startLine == "SIP/2.0 488 Not Acceptable Here", "\(final)")
            #expect(final.header("Warning") == ["302 irisgw \"Incompatible transport protocol\""], "\(final)")
            #expect(!phone.inviteResponses.contains { [180, 183, 200].contains($0.statusCode) }, phone.report)
            #expect(
                await eventually(timeout: 5) { phone.sipMessages.contains { $0.startLine.hasPrefix("ACK ") } },
                phone.report)

            #expect(try await gw.connection().sessions().isEmpty)
            #expect(await Self.metric(gw, "irisgw_inbound_invites_total") == 1)
            #expect(await Self.metric(gw, "irisgw_sessions_started_total") == 0)
            #expect(phone.isRunning, "baresip exited: \(phone.report)")
        }

        /// The positive control: the same baresip with `mediaenc` off offers plain RTP/AVP and
        /// the call rings: 180 at baresip, the app's notification, one inbound session at the
        /// gateway. baresip hangs up (CANCEL): 487, the session ends as canceled.
        @Test func baresipWithPlainRTPRings() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(account: .init(user: Self.caller, mediaenc: nil), dial: Self.dial(gw))
            defer { phone.stop() }

            #expect(await phone.waitFor("SIP Progress: 180 Ringing"), phone.report)
            let offer = try #require(phone.invites.first, phone.report).body
            #expect(
                offer.contains(" RTP/AVP ") && !offer.contains("a=crypto:"),
                "baresip's offer was not plain RTP: \(offer)")
            let note = await listener.next(timeout: 10)
            #expect(
                note?.userdata?.data.tar == Self.did && note?.userdata?.data.cid == Self.caller,
                "\(String(describing: note))")
            var sessions: [SessionSnapshot] = []
            #expect(
                await eventually(timeout: 10) {
                    sessions = (try? gw.connection().sessions()) ?? []
                    return !sessions.isEmpty
                })
            let session = try #require(sessions.first)
            #expect(sessions.count == 1)
            #expect(
                session.direction == "inbound" && session.sourceTN == Self.caller && session.targetTN == Self.did
                    && session.routingId == "alice" && session.status != .connected, "\(session)")
            #expect(note?.roomid == session.roomId)

            phone.send("/hangup")
            #expect(await phone.waitFor("487 Request Terminated"), phone.report)
            #expect(await eventually(timeout: 10) { (try? gw.connection().sessions().isEmpty) == true })
            #expect(await Self.metric(gw, "irisgw_sessions_started_total") == 1)
            let records = try await gw.recordsAfterStop()
            #expect(
                records.count == 1 && records.first?.endReason == "canceled" && records.first?.direction == "inbound",
                "\(records)")
        }
    }
}
