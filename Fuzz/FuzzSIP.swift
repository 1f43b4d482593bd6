// Harness `fuzz-sip` (dispatched from FuzzSIPTargets.swift, compiled with Sources/SIP into
// one module by `make fuzz`). Any bytes through the SIP parser (both framings) and the
// stream framer; what parses must serialise, parse again, and answer every typed accessor
// without crashing.
func fuzzSIP(_ bytes: [UInt8]) {
    for framing in [SIPMessage.Framing.datagram, .stream] {
        if let m = try? SIPMessage.parse(bytes, framing: framing) {
            let wire = m.serialize()
            invariant(
                (try? SIPMessage.parse(wire, framing: .stream)) != nil, "a parsed message must serialise to a valid one"
            )
            _ = (m.vias, m.from, m.to, m.cseq, m.contacts, m.routes, m.reasons, m.rack, m.sdp)
        }
    }
    var framer = SIPStreamFramer()
    _ = try? framer.append(bytes)
}
