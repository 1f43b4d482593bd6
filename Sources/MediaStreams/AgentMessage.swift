import Crypto
import Foundation

/// A message the agent sends on a bidirectional stream, in Twilio's words: audio to play
/// (`media`, always mu-law 8 kHz base64, as Twilio takes it), a `mark` to be echoed once the
/// audio before it has played, or `clear` (drop the audio not yet played).
public enum AgentMessage: Sendable, Equatable, Codable {
    case media(Media)
    case mark(Mark)
    case clear(Clear)

    /// `{"event":"media","streamSid":...,"media":{"payload":...}}`.
    public struct Media: Sendable, Equatable, Codable {
        public var streamSid: String
        public var media: Payload

        public init(streamSid: String, payload: String) {
            self.streamSid = streamSid
            self.media = Payload(payload: payload)
        }

        /// `media.media`: base64 audio.
        public struct Payload: Sendable, Equatable, Codable {
            public var payload: String
        }
    }

    /// `{"event":"mark","streamSid":...,"mark":{"name":...}}`.
    public struct Mark: Sendable, Equatable, Codable {
        public var streamSid: String
        public var mark: MediaStreamMessage.Name

        public init(streamSid: String, name: String) {
            self.streamSid = streamSid
            self.mark = MediaStreamMessage.Name(name: name)
        }
    }

    /// `{"event":"clear","streamSid":...}`.
    public struct Clear: Sendable, Equatable, Codable {
        public var streamSid: String

        public init(streamSid: String) { self.streamSid = streamSid }
    }

    private enum EventKey: String, CodingKey { case event }

    public init(from decoder: any Decoder) throws {
        let event = try decoder.container(keyedBy: EventKey.self).decode(String.self, forKey: .event)
        switch event {
        case "media": self = .media(try Media(from: decoder))
        case "mark": self = .mark(try Mark(from: decoder))
        case "clear": self = .clear(try Clear(from: decoder))
        default: throw MediaStreamMessageError.unknownEvent(event)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EventKey.self)
        switch self {
        case .media(let m):
            try container.encode("media", forKey: .event)
            try m.encode(to: encoder)
        case .mark(let m):
            try container.encode("mark", forKey: .event)
            try m.encode(to: encoder)
        case .clear(let m):
            try container.encode("clear", forKey: .event)
            try m.encode(to: encoder)
        }
    }

    /// The message as one JSON text (keys sorted).
    public var json: String { MediaStreamJSON.encode(self) }

    /// Reads what an agent sent, refusing with an error that names the problem: more than
    /// `limit` bytes, not a JSON object, no or an unknown `event`, a missing field or one of
    /// the wrong type, an empty `streamSid` or mark name, a `payload` that is not base64 or
    /// is empty. Never traps, whatever the text.
    public static func decode(
        _ text: String, limit: Int = MediaStreamJSON.defaultLimit
    ) throws(MediaStreamMessageError)
        -> AgentMessage
    {
        let message = try MediaStreamJSON.decode(AgentMessage.self, from: text, limit: limit)
        let sid: String
        switch message {
        case .media(let m):
            sid = m.streamSid
            guard let audio = Base64.decode(m.media.payload, padding: .optional) else {
                throw .invalidValue(field: "media.payload", reason: "not base64")
            }
            guard !audio.isEmpty else { throw .invalidValue(field: "media.payload", reason: "no audio") }
        case .mark(let m):
            sid = m.streamSid
            guard !m.mark.name.isEmpty else { throw .invalidValue(field: "mark.name", reason: "empty") }
        case .clear(let m):
            sid = m.streamSid
        }
        guard !sid.isEmpty else { throw .invalidValue(field: "streamSid", reason: "empty") }
        return message
    }

    /// The decoded audio of a `media` message (checked by `decode`); nil for the others.
    public var audio: [UInt8]? {
        guard case .media(let m) = self else { return nil }
        return Base64.decode(m.media.payload, padding: .optional)
    }
}
