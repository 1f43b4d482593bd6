// libFuzzer entry, compiled together with Sources/IOCore and Sources/Media into one module
// by `make fuzz`. Any bytes as RTP, RTP payloads (RFC 4733, RFC 3389) and RTCP: what parses
// is read; nothing may crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let view = try? RTPPacketView.parse(bytes) {
        let payload = view.payload(in: bytes)
        _ = (view.sequenceNumber, view.timestamp, view.ssrc, view.marker, payload.count)
        _ = try? TelephoneEvent.parse(payload)
        _ = try? ComfortNoisePayload.parse(Array(payload))
    }
    if let compound = try? RTCPCompoundPacket(parsing: bytes, allowReducedSize: true) {
        _ = compound.packets.count
    }
    _ = try? RTCPCompoundPacket(parsing: bytes)
    return 0
}
