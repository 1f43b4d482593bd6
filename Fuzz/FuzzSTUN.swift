// libFuzzer entry, compiled together with Sources/ICE into one module by `make fuzz`
// (linked with the fuzz builds of TLS and IOCore). Any bytes as a STUN message: the parser
// throws or returns, the MESSAGE-INTEGRITY and FINGERPRINT checks never read out of bounds,
// what parses serializes and parses back to the same value, and the ICE-lite agent answers
// or drops without trapping.
import IOCore

private let fuzzKey = Array("gatewayPasswordOf24char".utf8)
private let fuzzSource = SocketAddress(host: "192.0.2.50", port: 54321)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSTUN(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = PacketKind(datagram: bytes)
    _ = STUNMessage.verifyFingerprint(bytes)
    _ = STUNMessage.verifyMessageIntegrity(bytes, key: fuzzKey)
    if let message = try? STUNMessage.parse(bytes) {
        _ = message.unknownComprehensionRequired
        if let again = try? message.serialized() {
            guard let reparsed = try? STUNMessage.parse(again), reparsed == message else {
                fatalError("a parsed STUN message did not survive serialize/parse: \(message)")
            }
        }
    }
    var agent = ICELiteAgent(
        local: ICECredentials(ufrag: "gwUf", pwd: "gatewayPasswordOf24char"),
        remote: ICECredentials(ufrag: "brws", pwd: "browserPasswordOf24char"), now: 0)
    let reaction = agent.receive(bytes, from: fuzzSource, now: 1)
    if let response = reaction.response {
        guard (try? STUNMessage.parse(response)) != nil, STUNMessage.verifyFingerprint(response) == .valid else {
            fatalError("the agent sent a response that does not parse: \(response)")
        }
    }
    _ = agent.tick(now: 40)
    _ = agent.checkTimeout(now: 40)
    return 0
}
