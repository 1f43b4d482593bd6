// libFuzzer entry, compiled together with Sources/SIP into one module by `make fuzz`.
// Any bytes through the SDP parser; what parses must serialise and parse again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let sdp = try? SessionDescription.parse(bytes) {
        precondition((try? SessionDescription.parse(sdp.serialize())) != nil, "serialised SDP must parse")
        for i in sdp.media.indices {
            _ = (sdp.direction(ofMedia: i), sdp.media[i].rtpMaps, sdp.media[i].telephoneEventPayloadType)
        }
    }
    return 0
}
