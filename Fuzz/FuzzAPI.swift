// libFuzzer entry, compiled together with Sources/IrisAPI into one module by `make fuzz`.
// Any bytes as a control API request body: each request type decodes or refuses; nothing
// may crash, and what decodes must encode and decode again to the same value.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPI(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Data(bytes: data, count: size)
    // The server checks the limits first; what passes them must never crash a decoder.
    guard (try? JSONLimits.api.check(body)) != nil else { return 0 }
    func roundTrip<T: Codable & Equatable>(_ type: T.Type) {
        guard let value = try? JSONDecoder().decode(T.self, from: body) else { return }
        let again = try? JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
        precondition(again == value, "\(T.self) must survive a round trip")
    }
    roundTrip(CreateSessionRequest.self)
    roundTrip(JoinRequest.self)
    roundTrip(RejectRequest.self)
    roundTrip(MergeRequest.self)
    roundTrip(DTMFRequest.self)
    roundTrip(SessionEvent.self)
    return 0
}
