/// `GET /v1/sessions/{roomId}/sip`: the SIP messages of a session's trunk leg as they
/// crossed the wire, in order, kept as long as the session's history. Authorization
/// credentials are redacted; the trace is bounded (`dropped` counts messages left out of
/// the middle of a long call, so its setup and end stay).
public struct SIPTraceDocument: Codable, Sendable, Equatable {
    public var roomId: String
    public var messages: [SIPTraceMessage]
    /// Messages left out to keep the trace within its bounds.
    public var dropped: Int

    public init(roomId: String, messages: [SIPTraceMessage], dropped: Int = 0) {
        self.roomId = roomId
        self.messages = messages
        self.dropped = dropped
    }
}

/// One SIP message on the wire.
public struct SIPTraceMessage: Codable, Sendable, Equatable {
    /// Seconds since 1970 (UTC) when the gateway sent or read it.
    public var time: Double
    /// `sent` (by the gateway) or `received`.
    public var direction: String
    /// `UDP`, `TCP` or `TLS`.
    public var transport: String
    /// The gateway's address and the peer's, `host:port` (IPv6 in brackets).
    public var local: String
    public var remote: String
    /// The whole message, headers and body.
    public var text: String
    /// The same message went the same way before.
    public var retransmission: Bool

    public init(
        time: Double, direction: String, transport: String, local: String, remote: String, text: String,
        retransmission: Bool = false
    ) {
        self.time = time
        self.direction = direction
        self.transport = transport
        self.local = local
        self.remote = remote
        self.text = text
        self.retransmission = retransmission
    }

    /// The request or status line (`INVITE sip:... SIP/2.0`, `SIP/2.0 180 Ringing`).
    public var firstLine: String {
        String(text.prefix { $0 != "\r\n" && $0 != "\n" && $0 != "\r" })
    }
}

extension SIPTraceDocument {
    /// The trunk leg's RTP port as our own SDP named it (our INVITE's offer, or our answer);
    /// nil before we sent one.
    public var ourMediaPort: Int? {
        for m in messages where m.direction == "sent" {
            for line in m.text.split(whereSeparator: \.isNewline) where line.hasPrefix("m=audio ") {
                if let port = Int(line.dropFirst("m=audio ".count).prefix { $0.isNumber }) { return port }
            }
        }
        return nil
    }
}
