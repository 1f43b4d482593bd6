import IOCore
import SDP

/// What the client needs from an SDP answer: where to send, and with which payload type.
public struct SDPAudioAnswer: Sendable, Equatable {
    /// The answerer's RTP address (`c=` address, `m=audio` port).
    public let remote: SocketAddress
    /// The payload type the answer gives Opus: what we send with (RFC 3264 §6.1: the
    /// answerer receives on the numbers it lists).
    public let payloadType: UInt8
    /// The answerer's view of the stream (its own attribute, else the session's, else
    /// sendrecv: RFC 8866 §6.7).
    public let direction: MediaDirection

    /// Reads the first `m=audio` stream of `sdp` (parsed by ``SessionDescription/parse(_:)-swift.type.method``,
    /// so CRLF or LF line ends). A media-level `c=` overrides the session's. Opus is the
    /// first format whose `a=rtpmap` says opus/48000, or else `preferredPayloadType` listed
    /// with no `a=rtpmap` of its own.
    public static func parse(
        _ sdp: String, preferredPayloadType: UInt8 = 111
    ) throws(AudioAnswerError) -> SDPAudioAnswer {
        let description: SessionDescription
        do {
            description = try SessionDescription.parse(sdp)
        } catch {
            throw .malformed(error)
        }
        guard let index = description.firstMedia("audio") else { throw .noAudioStream }
        let media = description.media[index]
        guard !media.isRejected else { throw .audioRejected }
        guard let connection = description.connection(ofMedia: index) else { throw .missingConnection }
        let host = try address(of: connection)
        let preferred = Int(preferredPayloadType)
        let undeclaredPreferred = media.formats.contains(String(preferred)) && media.rtpMap(for: preferred) == nil
        let opus =
            media.rtpMaps.first { $0.encodingName.lowercased() == "opus" && $0.clockRate == 48_000 }?.payloadType
            ?? (undeclaredPreferred ? preferred : nil)
        guard let opus else { throw .opusNotAccepted(formats: media.formats) }
        return SDPAudioAnswer(
            remote: SocketAddress(host: host, port: Int(media.port)), payloadType: UInt8(opus),
            direction: description.direction(ofMedia: index))
    }

    /// The host of `IN IP4 <addr>[/ttl]` or `IN IP6 <addr>`: an IP literal of that family.
    private static func address(of connection: SDPConnection) throws(AudioAnswerError) -> String {
        let host = connection.host
        guard connection.netType == "IN", connection.addrType == "IP4" || connection.addrType == "IP6",
            SocketAddress(host: host, port: 0).withSockAddr({ _, _ in true }) != nil,
            host.contains(":") == (connection.addrType == "IP6")
        else {
            throw .unsupportedAddress(host)
        }
        return host
    }
}
