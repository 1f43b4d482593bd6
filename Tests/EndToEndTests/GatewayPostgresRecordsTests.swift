import Foundation
import Gateway
import TestSupport
import Testing

extension GatewaySuites {
    /// `irisgw serve` with `records: "postgres://..."`: a call's record goes to PostgreSQL
    /// (no `calls.sqlite`), and a database it cannot reach stops the start with an error that
    /// names the key and not the password.
    @Suite struct GatewayPostgresRecordsTests {
        @Test func aCallsRecordIsWrittenToPostgres() async throws {
            let server = try await PostgresServer.start()
            do {
                try await callWithRecordsIn(server)
                await server.stop()
            } catch {
                await server.stop()
                throw error
            }
        }

        private func callWithRecordsIn(_ server: PostgresServer) async throws {
            let url = server.url(database: try await server.createDatabase(), password: "pw-not-printed")
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), config: "{ records: \"\(url)\" }")
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            #expect(await gw.signal(SIGINT) == 0, "\(gw.printed)")
            #expect(await session.waitForEnd(timeout: 5))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let records = try await offThePool(throwing: { () throws -> [CallRecord] in
                let store = try CallRecordStore(postgres: url, heartbeatInterval: nil)
                defer { store.close() }
                return store.all()
            })
            #expect(records.count == 1, "\(records)")
            let record = try #require(records.first)
            #expect(record.endReason == "completed" && record.codec == "PCMU" && record.answeredAt != nil)
            #expect(record.targetTN == "+15551230001" && record.sourceTN == "+15557654321")
            #expect(!FileManager.default.fileExists(atPath: gw.dataDir + "/calls.sqlite"))
            #expect(!gw.printed.contains("pw-not-printed"), "\(gw.printed)")
        }

        @Test func anUnreachableRecordsDatabaseStopsTheStartNamingTheKey() async throws {
            // Nothing listens on a port the OS just handed out and took back.
            let port = try freePort()
            let config = "{ records: \"postgres://gw:pw-secret@127.0.0.1:\(port)/calls\" }"
            do {
                let gw = try await GatewayProcess(
                    profiles: [GatewayProcess.Profile(proxies: [try freePort()])], config: config)
                gw.stop()
                Issue.record("the gateway started without its records database")
            } catch {
                let text = "\(error)"
                #expect(text.contains("records \"postgres://gw:***@127.0.0.1:\(port)/calls\""), "\(text)")
                #expect(!text.contains("pw-secret"), "\(text)")
            }
        }
    }
}
