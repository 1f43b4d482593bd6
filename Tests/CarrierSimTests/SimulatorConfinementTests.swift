import IOCore
import Testing

@testable import CarrierSim

/// The simulator's call table lives in a `LoopBoundBox` on its SIP loop: `activeCalls` hops
/// there, and a read from another thread traps in debug builds (before, nothing checked it).
@Suite struct SimulatorConfinementTests {
    static func simulator() throws -> CarrierSimulator {
        var c = CarrierSimulator.Configuration()
        c.listen = SocketAddress(host: "127.0.0.1", port: 0)
        c.tcp = false
        c.mediaThreads = 1
        return try CarrierSimulator(configuration: c)
    }

    @Test func theCallTableIsReadOnTheSIPLoop() throws {
        let sim = try Self.simulator()
        #expect(sim.calls.value.isEmpty)  // before start the builder owns the loop
        try sim.start()
        defer { sim.shutdown() }
        #expect(sim.activeCalls == 0 && sim.ua.loop.sync { sim.calls.value.isEmpty })
    }

    #if DEBUG
        @Test func theCallTableOffTheRunningSIPLoopTrapsInDebugBuilds() async {
            await #expect(processExitsWith: .failure) {
                let sim = try Self.simulator()
                try sim.start()
                _ = sim.calls.value.count
                sim.shutdown()  // only the misuse may trap
            }
        }
    #endif
}
