import Testing

@testable import Media

/// Placement and admission by media load as a table: measured loads in, a thread or a
/// refusal out.
struct AdmissionCase: Sendable, CustomTestStringConvertible {
    var name: String
    var loads: [MediaThreadLoad]
    var budget: Double?
    var pending = 0
    var placed: Int?
    var testDescription: String { name }
}

private func load(_ busy: Double, _ calls: Int, measured: Int? = nil) -> MediaThreadLoad {
    MediaThreadLoad(busy: busy, calls: calls, callsAtMeasurement: measured ?? calls)
}

let admissionCases: [AdmissionCase] = [
    AdmissionCase(
        name: "an idle pool takes the call on its first thread", loads: [load(0, 0), load(0, 0)], budget: 0.8, placed: 0
    ),
    AdmissionCase(
        name: "a budget below one call's assumed cost refuses even the first", loads: [load(0.001, 0)], budget: 0.003,
        placed: nil),
    AdmissionCase(
        name: "the less busy thread wins, whatever the call counts",
        loads: [load(0.50, 100), load(0.20, 140)], budget: 0.8, placed: 1),
    AdmissionCase(
        name: "calls placed since the measurement count at the measured cost",
        loads: [load(0.10, 20), load(0.05, 40, measured: 10)], budget: 0.8, placed: 0),
    AdmissionCase(
        name: "both threads at the budget: refused", loads: [load(0.797, 158), load(0.80, 160)], budget: 0.8,
        placed: nil),
    AdmissionCase(
        name: "no budget: placed however loaded", loads: [load(0.99, 198), load(1.2, 240)], budget: nil, placed: 0),
    AdmissionCase(
        name: "inbound calls still ringing count against the budget",
        loads: [load(0.70, 140)], budget: 0.8, pending: 20, placed: nil),
    AdmissionCase(name: "fewer ringing calls fit", loads: [load(0.70, 140)], budget: 0.8, pending: 10, placed: 0),
    AdmissionCase(
        name: "calls ended since the measurement free their share",
        loads: [load(0.79, 20, measured: 100)], budget: 0.8, placed: 0),
    AdmissionCase(
        name: "equal loads: the thread with fewer calls", loads: [load(0.1, 30), load(0.1, 20)], budget: 0.8, placed: 1)
]

@Suite struct MediaAdmissionTests {
    @Test(arguments: admissionCases)
    func placement(_ c: AdmissionCase) {
        #expect(MediaAdmission.place(c.loads, budget: c.budget, defaultCost: 0.005, pending: c.pending) == c.placed)
    }

    /// The cost per call is measured once enough calls ran, assumed before.
    @Test func callCostIsMeasuredOrAssumed() {
        #expect(MediaAdmission.callCost([load(0.3, 3)], defaultCost: 0.005) == 0.005)
        #expect(abs(MediaAdmission.callCost([load(0.3, 100), load(0.1, 100)], defaultCost: 0.005) - 0.002) < 1e-12)
        // An idle-looking measurement never makes calls free.
        #expect(MediaAdmission.callCost([load(0, 100)], defaultCost: 0.004) == 0.001)
    }

    /// A real engine with a budget below one call's assumed cost refuses before it opens a
    /// port, and says why; without a budget it opens the call.
    @Test func engineRefusesPastItsBudget() throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let config = MediaCallConfiguration(
            trunk: .init(codec: .pcmu, payloadType: 0), platform: .init(codec: .pcmu, payloadType: 0))
        #expect(throws: MediaOverloadError.self) { try engine.openCall(config, loadBudget: 0.001) }
        #expect(throws: MediaOverloadError.self) { try engine.admit(budget: 0.001) }
        do {
            _ = try engine.openCall(config, loadBudget: 0.001)
        } catch let error as MediaOverloadError {
            #expect(error.description.contains("budget 0 %"), "\(error)")
        }
        let call = try engine.openCall(config, loadBudget: 0.5)
        call.close()
        #expect(engine.loads().count == 1)
    }
}
