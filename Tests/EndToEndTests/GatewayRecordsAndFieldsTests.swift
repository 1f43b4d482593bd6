import Foundation
import Gateway
import Glibc
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Issue 21, "records and fields", against a real `irisgw serve`: OPTIONS while draining,
    /// no `replaces` advertised, SDES keys out of traces and pcaps, bounded caller fields from
    /// SIPp, and call-record retention at start.
    @Suite struct GatewayRecordsAndFieldsTests {
        /// An OPTIONS from `probe` to the gateway; its answer, parsed, or nil within 5 s.
        static func options(_ gw: GatewayProcess, _ probe: UDPProbe) async -> SIPMessage? {
            probe.send(HostileTrafficTests.request("OPTIONS", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            return await probe.receive(timeout: 5).flatMap { try? SIPMessage.parse($0) }
        }

        /// What SIPp received: the messages whose first line starts with `prefix`.
        static func received(_ sipp: SIPp, _ prefix: String) -> [[String]] {
            sippMessages(sipp.messages).filter { !$0.sent && ($0.lines.first?.hasPrefix(prefix) ?? false) }.map(\.lines)
        }

        static func supportedTags(_ lines: [String]) -> [String] {
            lines.filter { $0.lowercased().hasPrefix("supported:") || $0.lowercased().hasPrefix("k:") }
                .flatMap { $0.split(separator: ":", maxSplits: 1).last.map { $0.split(separator: ",") } ?? [] }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }

        /// A load balancer's OPTIONS probe: 200 while the gateway takes calls, 503 with
        /// Retry-After once SIGTERM has it draining (a call still up keeps it draining), and
        /// both the OPTIONS answer and our INVITE advertise Replaces (an INVITE with Replaces
        /// takes over a session's trunk leg).
        @Test func optionsIs503WhileDrainingAndReplacesIsAdvertised() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), gatewayArguments: ["--drain-timeout", "60"])
            defer { gw.stop(); sipp.stop() }
            let probe = try UDPProbe()
            let up = try #require(await Self.options(gw, probe))
            #expect(up.statusCode == 200 && up[.retryAfter] == nil)
            #expect(up.supported.contains("replaces"), "\(up.supported)")

            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let invite = try #require(Self.received(sipp, "INVITE ").first, sipp.report)
            #expect(
                Self.supportedTags(invite).contains("100rel") && Self.supportedTags(invite).contains("replaces"),
                "\(invite)")

            kill(gw.processID, SIGTERM)
            #expect(await gw.waitForOutput(containing: "draining", timeout: 10), "\(gw.printed)")
            // The flag is set just after the line is printed: ask until the answer changes.
            var answer: SIPMessage?
            _ = await eventually(timeout: 10, pollInterval: 0.05) {
                answer = await Self.options(gw, probe)
                return answer?.statusCode == 503
            }
            #expect(answer?.statusCode == 503, "\(answer.map { "\($0.statusCode ?? 0)" } ?? "no answer")")
            #expect(answer?[.retryAfter] == "30")
            #expect(gw.isRunning, "the call in progress keeps the gateway draining")

            try await session.close()
            #expect(await rec.waitFor { $0.contains { $0.event == .onSessionEnded } }, "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            #expect(await eventually(timeout: 15) { !gw.isRunning }, "the drain ends with the last call")
        }

        /// SDES over clear SIP (allowed by the profile): SIPp receives our keys, the trace
        /// served at `/sip` and the pcap at `/pcap` do not; the suite and tag stay visible and
        /// tshark still reads every message.
        @Test func sdesKeysAreRedactedInTheTraceAndThePcap() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer()) { p in
                p.mediaExtra = "encryption: \"required\", sdesRequiresTLS: false"
            }
            defer { gw.stop(); sipp.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            let room = try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321", capture: true)
            // SIPp answers without keys: the call ends with our 488, after our BYE.
            #expect(await rec.waitFor(timeout: 20) { $0.contains { $0.event == .onSessionEnded } }, "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let keys = Self.inlineKeys(sipp.messages)
            #expect(
                keys.count == 3 && keys.allSatisfy { $0.count >= 40 && !$0.hasPrefix("REDACTED") },
                "SIPp got our keys: \(sipp.report)")

            _ = await eventually(timeout: 5) {
                (try? session.connection.sipTrace(roomId: room))?.messages.contains { $0.firstLine.hasPrefix("BYE ") }
                    == true
            }
            let trace = try await session.connection.sipTrace(roomId: room)
            let invite = try #require(trace.messages.first { $0.firstLine.hasPrefix("INVITE ") })
            #expect(
                invite.text.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:REDACTEDREDACTED"), "\(invite.text)")
            for key in keys { #expect(!trace.messages.contains { $0.text.contains(key) }, "a key in the trace") }

            let pcap = try await session.connection.capture(roomId: room)
            let text = String(decoding: pcap, as: UTF8.self)
            #expect(text.contains("inline:REDACTEDREDACTED"))
            for key in keys { #expect(!text.contains(key), "a key in the pcap") }
            let file = gw.directory.appendingPathComponent("keys.pcap").path
            #expect(FileManager.default.createFile(atPath: file, contents: Data(pcap)))
            let rows = try await GatewayCaptureTests.tshark(
                file, fields: ["sip.Method", "sip.Status-Code", "_ws.malformed"])
            let sip = rows.compactMap { r in
                (r["sip.Method"].flatMap { $0.isEmpty ? nil : $0 })
                    ?? (r["sip.Status-Code"].flatMap { $0.isEmpty ? nil : $0 })
            }
            #expect(sip.first == "INVITE" && sip.contains("BYE"), "\(sip)")
            #expect(rows.allSatisfy { ($0["_ws.malformed"] ?? "").isEmpty }, "tshark reads the redacted messages whole")
        }

        /// The base64 keys after every `inline:` in `text`.
        static func inlineKeys(_ text: String) -> [String] {
            text.components(separatedBy: "inline:").dropFirst().map { part in
                String(part.prefix { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=" })
            }.filter { !$0.isEmpty }
        }

        /// `CallerScenarios.answered` with the From's user part replaced, and in the INVITE
        /// its display name too (SIPp's scenario file has a size limit) and `headers` added.
        static func caller(
            displayName: String = "PSTN", user: String = "+15559876543", headers: [String] = [],
            _ scenario: String = CallerScenarios.answered(talkMs: 500)
        ) -> String {
            var s = scenario.replacingOccurrences(
                of: "From: \"PSTN\" <sip:+15559876543@", with: "From: \"PSTN\" <sip:\(user)@")
            if let at = s.range(of: "From: \"PSTN\" <") { s.replaceSubrange(at, with: "From: \"\(displayName)\" <") }
            if let at = s.range(of: "Max-Forwards: 70\n") {
                s.replaceSubrange(at, with: "Max-Forwards: 70\n" + headers.map { $0 + "\n" }.joined())
            }
            return s
        }

        /// A caller whose INVITE holds a 10 KB display name, a 10 KB X- header and a 5 KB
        /// asserted identity: the app's notification (and so the webhook's post) carries the
        /// number and the headers within their limits and says which fields lost values; the
        /// call still connects, and our 200 OK advertises no Replaces.
        @Test func hugeCallerFieldsAreBoundedAndSaidToBe() async throws {
            let huge = String(repeating: "A", count: 10_000)
            let xml = Self.caller(
                displayName: huge,
                headers: [
                    "X-Huge: " + String(repeating: "x", count: 10_000), "X-Carrier-Ref: 7f3a9c",
                    "P-Asserted-Identity: \"\(String(repeating: "P", count: 5_000))\" <sip:+15559876543@carrier.example>, <tel:+15559876543>"
                ])
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await GatewayInboundTests.notification(gw) {
                try GatewayInboundTests.caller(gw, xml)
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            #expect(n.userdata?.data.cid == "+15559876543")
            let carrier = try #require(n.carrier)
            #expect(carrier.headers == ["X-Carrier-Ref": "7f3a9c"], "\(carrier.headers ?? [:])")
            #expect(carrier.pAssertedIdentity == ["<tel:+15559876543>"])
            #expect(carrier.truncated == ["pAssertedIdentity", "headers"], "\(carrier.truncated ?? [])")
            let json = String(decoding: try JSONEncoder().encode(n), as: UTF8.self)
            #expect(
                json.utf8.count < 4096 && !json.contains(String(repeating: "A", count: 100))
                    && !json.contains(String(repeating: "x", count: 100)),
                "\(json.utf8.count) bytes")
            let room = try #require(n.roomid)
            #expect(try await gw.connection().snapshot(roomId: room).carrier == carrier)

            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: room, roomToken: try #require(n.roomtoken))
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            #expect(await session.waitForEnd(timeout: 15))
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let ok = try #require(Self.received(sipp, "SIP/2.0 200").first, sipp.report)
            #expect(Self.supportedTags(ok).contains("timer") && Self.supportedTags(ok).contains("replaces"), "\(ok)")
            let records = try await gw.recordsAfterStop()
            #expect(records.map(\.sourceTN) == ["+15559876543"] && records.first?.roomId == room)
        }

        /// Numbers past their limits are refused before any session: a 1000-digit calling
        /// number gets 400, a 200-digit called number (to a `*` route, which would take any)
        /// gets 414; no notification, no session, no record.
        @Test(arguments: [
            (String(repeating: "5", count: 1000), "+15550001000", "400 Bad Request (calling number over 64 bytes)"),
            (
                "+15559876543", "+" + String(repeating: "1", count: 200),
                "414 Request-URI Too Long (called number over 64 bytes)"
            )
        ])
        func numbersPastTheirLimitsAreRefused(calling: String, called: String, status: String) async throws {
            var profile = GatewayProcess.Profile()
            profile.routes = [("*", "alice")]
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let code = Int(status.prefix(3))!
            let xml = Self.caller(user: calling, CallerScenarios.rejected(code, ring: false))
            let sipp = try GatewayInboundTests.caller(gw, xml, did: called)
            defer { sipp.stop() }
            #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
            #expect(Self.received(sipp, "SIP/2.0 \(code)").first?.first == "SIP/2.0 " + status, sipp.report)
            #expect(try await gw.connection().sessions().isEmpty)
            #expect(try await gw.recordsAfterStop().isEmpty)
        }

        /// `callRecordRetentionDays`: records of calls ended long ago are gone once the
        /// gateway has started; recent ones stay.
        @Test func oldCallRecordsArePrunedAtStart() async throws {
            let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-retention-\(UUID().uuidString.prefix(8))"
            ).path
            try FileManager.default.createDirectory(
                atPath: dataDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(atPath: dataDir) }
            let now = Date().timeIntervalSince1970
            let seed = try CallRecordStore(path: dataDir + "/calls.sqlite", heartbeatInterval: nil)
            for (room, days) in [("old", 40.0), ("older", 400.0), ("recent", 2.0)] {
                seed.started(
                    CallRecord(
                        roomId: room, traceId: "t", direction: "inbound", sourceTN: "+15559876543",
                        targetTN: "+15550001000",
                        profile: "trunk", startedAt: now - days * 86_400))
                seed.finished(roomId: room) {
                    $0.endedAt = $0.startedAt + 30
                    $0.endReason = "completed"
                }
            }
            seed.flush()
            seed.close()
            chmod(dataDir + "/calls.sqlite", 0o600)
            let gw = try await GatewayProcess(
                profiles: [.init()], config: "{ callRecordRetentionDays: 30 }", dataDir: dataDir)
            defer { gw.stop() }
            #expect(
                await gw.waitForOutput(containing: "pruned 2 ended records started over 30 days ago", timeout: 10),
                "\(gw.printed)")
            // `serve` prints "ready" just before it starts listening for SIGINT and SIGTERM
            // (waitForTermination), and a signal in between is lost: this test signals at
            // once, so it repeats the signal until the gateway is gone.
            var stopped = false
            for _ in 0..<5 where !stopped { stopped = await gw.signal(SIGINT, timeout: 2) != nil }
            #expect(stopped)
            #expect(try await gw.recordsAfterStop().map(\.roomId) == ["recent"])
        }
    }
}
