import Foundation
import Glibc
import IOCore
import SDP

/// The little SDP the bench exchanges with rtpengine: one audio stream on 127.0.0.1.
enum BenchSDP {
    /// An SDP offering (or answering with) one codec: `rtpmap` is e.g. "PCMU/8000", `fmtp` optional.
    static func audio(port: Int, payloadType: UInt8, rtpmap: String, fmtp: String? = nil, session: Int) -> String {
        var attributes = [SDPAttribute(name: "rtpmap", value: "\(payloadType) \(rtpmap)")]
        if let fmtp { attributes.append(.fmtp(payloadType: Int(payloadType), fmtp)) }
        attributes += [.ptime(20), .direction(.sendrecv)]
        let media = MediaDescription(
            media: "audio", port: UInt16(port), formats: [String(payloadType)], attributes: attributes)
        return SessionDescription.single(
            media, host: "127.0.0.1", sessionID: String(session), version: 1,
            sessionName: "irisgw-bench"
        ).serialize()
    }

    /// The first audio stream's port and its payload types (in the m= line's order).
    static func audioStream(_ sdp: String) -> (port: Int, payloadTypes: [UInt8])? {
        guard let description = try? SessionDescription.parse(sdp), let index = description.firstMedia("audio") else {
            return nil
        }
        let audio = description.media[index]
        return (Int(audio.port), audio.formats.compactMap { UInt8($0) })
    }

    /// The payload type an `a=rtpmap` line gives `encoding` (case-insensitive), if any.
    static func payloadType(of encoding: String, in sdp: String) -> UInt8? {
        guard let description = try? SessionDescription.parse(sdp) else { return nil }
        let declared = description.media.flatMap { $0.attributes.values(named: "rtpmap") }.compactMap {
            try? RTPMap.parse($0)
        }
        return declared.first { $0.encodingName.lowercased() == encoding.lowercased() }.flatMap {
            UInt8(exactly: $0.payloadType)
        }
    }
}
