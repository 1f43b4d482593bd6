import IOCore

/// Why an SDP answer cannot be used for the client's Opus leg.
public enum ClientSDPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `m=audio` line.
    case noAudioStream
    /// The audio stream's port is 0: the answerer declined it (RFC 3264 §6).
    case audioRejected
    /// An `m=` or `c=` line that does not parse.
    case malformedLine(String)
    /// Neither the session nor the audio stream has a `c=` line.
    case missingConnection
    /// A `c=` address that is not an IPv4/IPv6 literal (FQDNs are not resolved here).
    case unsupportedAddress(String)
    /// The answer's audio stream does not carry Opus.
    case opusNotAccepted(formats: [String])

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .noAudioStream: "SDP answer has no m=audio line"
        case .audioRejected: "SDP answer rejected the audio stream (port 0)"
        case .malformedLine(let line): "SDP answer line does not parse: \(line)"
        case .missingConnection: "SDP answer has no c= line for the audio stream"
        case .unsupportedAddress(let address): "SDP answer address \(address) is not an IP literal"
        case .opusNotAccepted(let formats): "SDP answer's audio stream has no Opus (formats: \(formats.joined(separator: " ")))"
        }
    }
}

/// What the client needs from an SDP answer: where to send, and with which payload type.
public struct SDPAudioAnswer: Sendable, Equatable {
    /// Direction attribute of the audio stream (RFC 3264 §5.1; default sendrecv).
    public enum Direction: String, Sendable {
        case sendrecv, sendonly, recvonly, inactive
    }

    /// The answerer's RTP address (`c=` address, `m=audio` port).
    public let remote: SocketAddress
    /// The payload type the answer gives Opus: what we send with (RFC 3264 §6.1: the
    /// answerer receives on the numbers it lists).
    public let payloadType: UInt8
    /// The answerer's view of the stream.
    public let direction: Direction

    /// Parses the first `m=audio` stream of `sdp`. Lines may end in CRLF or LF; a media-level
    /// `c=` overrides the session's. Opus is found by `a=rtpmap:<pt> opus/48000...` on a
    /// format the `m=` line lists, or else by `preferredPayloadType` being listed.
    public static func parse(_ sdp: String, preferredPayloadType: UInt8 = 111) throws(ClientSDPError) -> SDPAudioAnswer {
        var sessionConnection: String?
        var media: (port: Int, formats: [String])?
        var mediaConnection: String?
        var rtpmaps: [String: String] = [:]
        var direction = Direction.sendrecv
        var sawSecondMedia = false
        // isNewline covers "\n" and "\r\n" (one Character in Swift).
        for line in sdp.split(whereSeparator: \.isNewline) {
            guard line.count >= 2, line[line.index(after: line.startIndex)] == "=" else { continue }
            let value = line.dropFirst(2)
            switch line.first {
            case "m":
                // Only the first audio stream matters; later streams (video, ...) are skipped.
                if media != nil { sawSecondMedia = true; continue }
                let fields = value.split(separator: " ")
                guard fields.first == "audio" else { continue }
                guard fields.count >= 4, let port = Int(fields[1].prefix { $0 != "/" }), (0...65535).contains(port) else {
                    throw .malformedLine(String(line))
                }
                media = (port, fields.dropFirst(3).map(String.init))
            case "c":
                guard !sawSecondMedia else { continue }
                if media == nil { sessionConnection = String(value) } else { mediaConnection = String(value) }
            case "a":
                guard media != nil, !sawSecondMedia else { continue }
                if value.hasPrefix("rtpmap:") {
                    let parts = value.dropFirst("rtpmap:".count).split(separator: " ", maxSplits: 1)
                    if parts.count == 2 { rtpmaps[String(parts[0])] = parts[1].lowercased() }
                } else if let d = Direction(rawValue: String(value)) {
                    direction = d
                }
            default:
                continue
            }
        }
        guard let media else { throw .noAudioStream }
        guard media.port != 0 else { throw .audioRejected }
        guard let connection = mediaConnection ?? sessionConnection else { throw .missingConnection }
        let host = try address(of: connection)
        let opus = media.formats.first { rtpmaps[$0]?.hasPrefix("opus/48000") == true }
            ?? media.formats.first { $0 == String(preferredPayloadType) && rtpmaps[$0] == nil }
        guard let opus, let pt = UInt8(opus), pt <= 127 else { throw .opusNotAccepted(formats: media.formats) }
        return SDPAudioAnswer(remote: SocketAddress(host: host, port: media.port), payloadType: pt, direction: direction)
    }

    /// The address of `IN IP4 <addr>[/ttl]` or `IN IP6 <addr>`.
    private static func address(of connection: String) throws(ClientSDPError) -> String {
        let fields = connection.split(separator: " ")
        guard fields.count == 3, fields[0] == "IN", fields[1] == "IP4" || fields[1] == "IP6" else {
            throw .malformedLine("c=" + connection)
        }
        let host = String(fields[2].prefix { $0 != "/" })
        guard SocketAddress(host: host, port: 0).withSockAddr({ _, _ in true }) != nil,
              host.contains(":") == (fields[1] == "IP6") else {
            throw .unsupportedAddress(host)
        }
        return host
    }
}

/// The minimal SDP offer (RFC 4566, RFC 7587) for one Opus leg.
enum ClientSDPOffer {
    static func text(host: String, port: Int, payloadType: UInt8, sessionID: UInt64, sessionVersion: UInt64) -> String {
        let family = host.contains(":") ? "IP6" : "IP4"
        return [
            "v=0",
            "o=- \(sessionID) \(sessionVersion) IN \(family) \(host)",
            "s=irisgw-client",
            "c=IN \(family) \(host)",
            "t=0 0",
            "m=audio \(port) RTP/AVP \(payloadType)",
            "a=rtpmap:\(payloadType) opus/48000/2",
            "a=fmtp:\(payloadType) minptime=20;useinbandfec=1",
            "a=ptime:20",
            "a=sendrecv",
        ].map { $0 + "\r\n" }.joined()
    }
}
