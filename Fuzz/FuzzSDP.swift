// Harness `fuzz-sdp` (dispatched from FuzzSIPTargets.swift, compiled with Sources/SIP (over the SDP module) into
// one module by `make fuzz`). Any bytes through the SDP parser; what parses must serialise
// and parse again.
import SDP

func fuzzSDP(_ bytes: [UInt8]) {
    if let sdp = try? SessionDescription.parse(bytes) {
        invariant((try? SessionDescription.parse(sdp.serialize())) != nil, "serialised SDP must parse")
        for i in sdp.media.indices {
            _ = (sdp.direction(ofMedia: i), sdp.media[i].rtpMaps, sdp.media[i].telephoneEventPayloadType)
        }
    }
}
