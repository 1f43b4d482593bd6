import Foundation
import TestSupport
import Testing

@testable import Gateway

/// The databases a call record store runs on, for the store tests that hold for both.
enum RecordsBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One database for a test's stores: a file in a temporary directory, or a fresh database
/// on a PostgreSQL server of the test's own.
struct RecordsDatabase: Sendable {
    let backend: RecordsBackend
    /// The SQLite file, or the PostgreSQL URL (with a password, which trust ignores).
    let location: String
    /// The server behind a PostgreSQL database.
    let server: PostgresServer?

    /// A store on this database with no heartbeat unless given and a clock that says `now`.
    func open(
        nodeId: String = "", now: Double = 5_000, heartbeatInterval: Double? = nil,
        retention: CallRecordRetention = .keepAll
    ) throws -> CallRecordStore {
        try open(nodeId: nodeId, heartbeatInterval: heartbeatInterval, retention: retention, clock: { now })
    }

    func open(
        nodeId: String = "", heartbeatInterval: Double? = nil, retention: CallRecordRetention = .keepAll,
        clock: @escaping @Sendable () -> Double
    ) throws -> CallRecordStore {
        switch backend {
        case .sqlite:
            try CallRecordStore(
                path: location, nodeId: nodeId, heartbeatInterval: heartbeatInterval, retention: retention,
                clock: clock)
        case .postgres:
            try CallRecordStore(
                postgres: location, nodeId: nodeId, heartbeatInterval: heartbeatInterval, retention: retention,
                clock: clock)
        }
    }
}

/// Runs `body` with a fresh database of `backend`, then removes it (and stops its server).
func withRecordsDatabase<T>(
    _ backend: RecordsBackend, waiting body: (RecordsDatabase) async throws -> T
) async throws -> T {
    switch backend {
    case .sqlite:
        return try await withTemporaryDirectory(
            "cdr",
            waiting: { dir in
                try await body(RecordsDatabase(backend: .sqlite, location: dir + "/cdr.sqlite", server: nil))
            })
    case .postgres:
        let server = try await PostgresServer.start()
        do {
            let name = try await server.createDatabase()
            let result = try await body(
                RecordsDatabase(
                    backend: .postgres, location: server.url(database: name, password: "not-logged"), server: server))
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// `withRecordsDatabase` for a body that blocks (the store's reads and flushes wait for its
/// writer): the body runs off the cooperative pool.
func withRecordsDatabase<T>(
    _ backend: RecordsBackend, _ body: @escaping (RecordsDatabase) throws -> T
) async throws
    -> T
{
    try await withRecordsDatabase(
        backend,
        waiting: { database in
            try await offThePool(throwing: { () throws -> T in try body(database) })
        })
}
