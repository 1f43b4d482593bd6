import IOCore
import SDP

/// The recording session's SDP (RFC 7866 §7.1): our offer of two `a=sendonly` PCMU streams
/// labelled 1 (the carrier's side) and 2 (the app's side), and where the recording server's
/// answer wants each sent.
enum SIPRECStreams {
    /// Our offer: one `m=audio` per track, in `SIPRECMetadataState.tracks` order, from
    /// `ports` at `host`.
    static func offer(host: String, ports: [Int], sessionID: String) -> SessionDescription {
        var sdp = SessionDescription.single(
            MediaDescription.audio(port: 0, codecs: [.pcmu]), host: host, sessionID: sessionID, version: 1)
        sdp.media = zip(SIPRECMetadataState.tracks, ports).map { track, port in
            var m = MediaDescription.audio(port: UInt16(port), codecs: [.pcmu], ptime: 20, direction: .sendonly)
            m.attributes.append(SDPAttribute(name: "label", value: SIPRECMetadataState.labels[track]))
            return m
        }
        return sdp
    }

    /// Where each stream goes, by `m=` line (nil: not sent: port 0, `inactive`, no PCMU).
    /// Throws when the answer is unusable: not one `m=` line per stream, or none to send to.
    static func destinations(in answer: SessionDescription?) throws(SIPRECEndReason) -> [SocketAddress?] {
        guard let answer else { throw .badAnswer("no SDP in the answer") }
        let count = SIPRECMetadataState.tracks.count
        guard answer.media.count == count else {
            throw .badAnswer("\(answer.media.count) m= line(s) in the answer, \(count) offered")
        }
        let targets = answer.media.indices.map { i -> SocketAddress? in
            let m = answer.media[i]
            guard m.media == "audio", !m.isRejected, m.isPlainRTP, m.formats.contains("0"),
                answer.direction(ofMedia: i).isReceiving,
                let host = answer.connection(ofMedia: i)?.host, !host.isEmpty
            else { return nil }
            let address = SocketAddress(host: host, port: Int(m.port))
            return RawSocketAddress(address) == nil ? nil : address
        }
        guard targets.contains(where: { $0 != nil }) else { throw .badAnswer("no stream to send to") }
        return targets
    }
}
