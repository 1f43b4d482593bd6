// libFuzzer entry `fuzz-dtls`, linked against libTLS.a by `make fuzz`. Any bytes as datagrams
// (each a 2-byte length and that many bytes) given to a `DTLSTransport`, as an off-path
// sender could put them on a call's UDP port. The first byte picks the victim: a server
// waiting for a ClientHello (0), or the client (1) or server (2) of a pair that has just
// finished a handshake in memory.
// Invariants: nothing crashes; a failure classifies itself; an established association is
// never ended by datagrams made without its keys (OpenSSL 3.0 would end one on an
// AEAD record too short for its tag, which `DTLSRecordFilter` drops first).
import TLS

/// Made once: certificates and contexts for both ends (key generation is the slow part).
nonisolated(unsafe) let ends:
    (client: DTLSContext, server: DTLSContext, clientPrint: DTLSFingerprint, serverPrint: DTLSFingerprint) = {
        let c = try! DTLSCertificate(commonName: "client"), s = try! DTLSCertificate()
        return (try! DTLSContext(certificate: c), try! DTLSContext(certificate: s), c.fingerprint, s.fingerprint)
    }()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDTLS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var datagrams: [[UInt8]] = []
    var offset = 1
    while offset + 2 <= size {
        let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
        let end = min(size, offset + 2 + length)
        datagrams.append(Array(bytes[(offset + 2)..<end]))
        offset = end
    }
    var server = try! DTLSTransport(context: ends.server, role: .server, peerFingerprints: [ends.clientPrint])
    let mode = bytes[0] % 3
    if mode == 0 {
        _ = server.start(now: 0)
        for d in datagrams {
            let out = server.receive(d, now: 0)
            if let failure = out.failure { invariant(!failure.kind.isEmpty, "a failure without a kind") }
            for reply in out.datagrams { invariant(reply.count <= server.settings.mtu, "a datagram over the MTU") }
        }
        return 0
    }
    var client = try! DTLSTransport(context: ends.client, role: .client, peerFingerprints: [ends.serverPrint])
    var toServer = client.start(now: 0).datagrams, toClient: [[UInt8]] = []
    for _ in 0..<10 where !toServer.isEmpty || !toClient.isEmpty {
        for d in toServer { toClient += server.receive(d, now: 0).datagrams }
        toServer = []
        for d in toClient { toServer += client.receive(d, now: 0).datagrams }
        toClient = []
    }
    invariant(client.isConnected && server.isConnected, "the in-memory handshake must succeed")
    for d in datagrams {
        if mode == 1 { _ = client.receive(d, now: 1) } else { _ = server.receive(d, now: 1) }
    }
    invariant(client.isConnected && server.isConnected, "datagrams without the keys ended an association")
    return 0
}

/// A precondition whose message survives -O (`precondition`'s is dropped there).
func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
