import Testing

@testable import ControlAPI

/// The HTTP core's connections, WebSocket groups and shutdown state live in a `LoopBoundBox`
/// on the server's loop: reached through `loop.sync` they answer, reached from another
/// thread they trap in debug builds (before, nothing checked them).
@Suite struct HTTPServerConfinementTests {
    @Test func theCoreStateAnswersOnItsLoop() throws {
        let (server, _, _) = try startServer()
        defer { server.stop() }
        let core = try #require(server.runningCore)
        #expect(
            core.loop.sync { (core.connections.count, core.shuttingDown, core.tlsContext == nil) } == (0, false, true))
    }

    #if DEBUG
        enum Misuse: String, CaseIterable, Sendable, Codable { case connections, shuttingDown, dates }

        @Test("The core's state off its running loop traps in debug builds", arguments: Misuse.allCases)
        func misuseTraps(_ misuse: Misuse) async {
            await #expect(processExitsWith: .failure) { [misuse] in
                let (server, _, _) = try startServer()
                guard let core = server.runningCore else { return }
                switch misuse {
                case .connections: _ = core.connections.count
                case .shuttingDown: _ = core.shuttingDown
                case .dates: _ = core.dates.now()
                }
                server.stop()  // only the misuse may trap
            }
        }
    #endif
}
