// libFuzzer entry `fuzz-api`, compiled together with Sources/IrisAPI into one module by
// `make fuzz`. Any bytes as a control API request body, taken the way the server takes one
// (ControlAPIServer.decode): JSONLimits.api first, and only what it passes goes to a decoder.
// Invariants: what the limits pass decodes or is refused, never crashes, with each request
// type and with Foundation's generic parser; no parser reads it nested deeper than the limit
// (the bound exists because deep nesting overflows a decoder's stack); what decodes encodes
// and decodes again to the same value.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPI(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try JSONLimits.api.check(bytes)
    } catch {
        return 0
    }
    let body = Data(bytes)
    if let tree = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
        let depth = nesting(tree)
        invariant(
            depth <= JSONLimits.api.maxDepth,
            "JSONLimits.api passed a body that parses \(depth) arrays or objects deep (limit \(JSONLimits.api.maxDepth))"
        )
    }
    func roundTrip<T: Codable & Equatable>(_ type: T.Type) {
        guard let value = try? JSONDecoder().decode(T.self, from: body) else { return }
        let again = try? JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
        invariant(again == value, "\(T.self) must survive a round trip")
    }
    roundTrip(CreateSessionRequest.self)
    roundTrip(JoinRequest.self)
    roundTrip(RejectRequest.self)
    roundTrip(MergeRequest.self)
    roundTrip(DTMFRequest.self)
    roundTrip(PageTokenRequest.self)
    roundTrip(SessionEvent.self)
    return 0
}

/// How many arrays and objects deep a JSONSerialization value goes, counted without recursion.
func nesting(_ root: Any) -> Int {
    var deepest = 0
    var pending: [(value: Any, depth: Int)] = [(root, 0)]
    while let (value, depth) = pending.popLast() {
        if let array = value as? [Any] {
            deepest = max(deepest, depth + 1)
            pending += array.map { ($0, depth + 1) }
        } else if let object = value as? [String: Any] {
            deepest = max(deepest, depth + 1)
            pending += object.values.map { ($0, depth + 1) }
        }
    }
    return deepest
}

/// A precondition whose message survives -O (`precondition`'s is dropped there).
func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
