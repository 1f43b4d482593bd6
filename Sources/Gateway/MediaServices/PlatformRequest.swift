import IrisAPI
import Media
import MediaStreams
import SDP

/// The app's leg as a request asks for it: an SDP offer (RTP or WebRTC), or a voice agent's
/// WebSocket (`media.websocket`), whose leg is the call's audio source and sink.
struct PlatformRequest {
    /// The platform leg the media engine opens: the offer's, or for an agent a PCMU leg with
    /// no peer (nothing is sent on it: the agent's audio replaces it).
    var leg: NegotiatedLeg
    var agent: AgentStreamRequest?
}

/// A voice agent's stream, checked.
struct AgentStreamRequest {
    var configuration: MediaStreamConfiguration
    var customParameters: [String: String]
    var hangupOnClose: Bool
}

extension Gateway {
    /// Reads `media` (exactly one of `sdp` and `websocket`); a bad one is 400 naming the field.
    func platformRequest(
        _ media: MediaBody, prefer: String?, opus: AudioCodec.OpusSettings
    ) throws(GatewayError) -> PlatformRequest {
        switch (media.sdp, media.websocket) {
        case (let sdp?, nil):
            do {
                return PlatformRequest(
                    leg: try MediaNegotiation.platformLeg(offer: sdp, prefer: prefer, opus: opus))
            } catch {
                throw .badRequest("media.sdp: \(error.message)")
            }
        case (nil, let ws?):
            let stream = try streamConfiguration(
                url: ws.url, headers: ws.headers, encoding: ws.encoding, field: "media.websocket")
            let pcmu = RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000)
            return PlatformRequest(
                leg: NegotiatedLeg(codec: .pcmu, rtpMap: pcmu, telephoneEvent: nil, remote: nil, direction: .sendrecv),
                agent: AgentStreamRequest(
                    configuration: stream, customParameters: ws.customParameters ?? [:],
                    hangupOnClose: ws.hangupOnClose ?? true))
        case (nil, nil):
            throw .badRequest("media: give sdp (an offer) or websocket (a voice agent's stream)")
        case (_?, _?):
            throw .badRequest("media: give sdp or websocket, not both")
        }
    }

    /// A stream's settings from a request's fields, checked against the gateway's
    /// `mediaStreams` settings; a bad field is 400 naming it.
    func streamConfiguration(
        url: String, headers: [String: String]?, encoding: String?, field: String
    ) throws(GatewayError) -> MediaStreamConfiguration {
        let lower = url.lowercased()
        guard lower.hasPrefix("ws://") || lower.hasPrefix("wss://"), url.utf8.count <= 2048,
            !url.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F })
        else {
            throw .badRequest("\(field).url must be a ws:// or wss:// URL of at most 2048 bytes")
        }
        var c = MediaStreamConfiguration(url: url)
        if let headers {
            guard headers.count <= 16,
                headers.allSatisfy({ name, value in
                    !name.isEmpty && name.utf8.count <= 128 && value.utf8.count <= 2048
                        && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
                        && !value.utf8.contains { $0 < 0x20 || $0 == 0x7F }
                })
            else {
                throw .badRequest(
                    "\(field).headers: at most 16, names tokens of up to 128 bytes, values up to 2048 bytes without control bytes"
                )
            }
            c.headers = headers
        }
        switch encoding {
        case nil, "audio/x-mulaw": c.audioFormat = .mulaw8k
        case "audio/l16;rate=16000": c.audioFormat = .l16at16k
        case let other?:
            throw .badRequest("\(field).encoding must be audio/x-mulaw or audio/l16;rate=16000, found \"\(other)\"")
        }
        let settings = configuration.mediaStreams
        c.caFile = settings.caFile
        c.connectTimeout = Double(settings.connectTimeoutSec)
        c.maxQueuedAudioFrames = settings.maxQueuedFrames
        c.dns = configuration.sip.dns
        return c
    }
}
