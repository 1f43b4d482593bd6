import Foundation

/// A message the gateway sends to the agent, in Twilio Media Streams' words (the `event`
/// field names the case). Every message but `connected` carries `sequenceNumber`, a decimal
/// string counting up from "1" as Twilio sends it, and the stream's `streamSid`.
public enum MediaStreamMessage: Sendable, Equatable, Codable {
    case connected(Connected)
    case start(Start)
    case media(Media)
    case mark(Mark)
    case dtmf(DTMF)
    case stop(Stop)

    /// First message: the protocol to expect.
    public struct Connected: Sendable, Equatable, Codable {
        public var `protocol`: String
        public var version: String

        public init(protocol: String = "Call", version: String = "1.0.0") {
            self.protocol = `protocol`
            self.version = version
        }
    }

    /// The stream's metadata, once, after `connected`.
    public struct Start: Sendable, Equatable, Codable {
        public var sequenceNumber: String
        public var streamSid: String
        public var start: Metadata

        public init(sequenceNumber: String, streamSid: String, start: Metadata) {
            self.sequenceNumber = sequenceNumber
            self.streamSid = streamSid
            self.start = start
        }
    }

    /// `start.start`: who the stream belongs to and what its audio is.
    public struct Metadata: Sendable, Equatable, Codable {
        public var streamSid: String
        public var accountSid: String
        public var callSid: String
        /// "inbound", "outbound" or both.
        public var tracks: [String]
        public var customParameters: [String: String]
        public var mediaFormat: MediaFormat

        public init(
            streamSid: String, accountSid: String, callSid: String, tracks: [String],
            customParameters: [String: String], mediaFormat: MediaFormat
        ) {
            self.streamSid = streamSid
            self.accountSid = accountSid
            self.callSid = callSid
            self.tracks = tracks
            self.customParameters = customParameters
            self.mediaFormat = mediaFormat
        }
    }

    /// `start.start.mediaFormat`: "audio/x-mulaw" at 8000, or "audio/l16;rate=16000" at 16000; mono.
    public struct MediaFormat: Sendable, Equatable, Codable {
        public var encoding: String
        public var sampleRate: Int
        public var channels: Int

        public init(encoding: String, sampleRate: Int, channels: Int = 1) {
            self.encoding = encoding
            self.sampleRate = sampleRate
            self.channels = channels
        }
    }

    /// Audio of one track.
    public struct Media: Sendable, Equatable, Codable {
        public var sequenceNumber: String
        public var streamSid: String
        public var media: Payload

        public init(sequenceNumber: String, streamSid: String, media: Payload) {
            self.sequenceNumber = sequenceNumber
            self.streamSid = streamSid
            self.media = media
        }

        /// `media.media`: the track, the chunk number (from "1"), the milliseconds since the
        /// stream started, and the audio in base64.
        public struct Payload: Sendable, Equatable, Codable {
            public var track: String
            public var chunk: String
            public var timestamp: String
            public var payload: String

            public init(track: String, chunk: String, timestamp: String, payload: String) {
                self.track = track
                self.chunk = chunk
                self.timestamp = timestamp
                self.payload = payload
            }
        }
    }

    /// The echo of an agent's mark: the audio queued before it has been played.
    public struct Mark: Sendable, Equatable, Codable {
        public var sequenceNumber: String
        public var streamSid: String
        public var mark: Name

        public init(sequenceNumber: String, streamSid: String, mark: Name) {
            self.sequenceNumber = sequenceNumber
            self.streamSid = streamSid
            self.mark = mark
        }
    }

    /// A digit the caller pressed.
    public struct DTMF: Sendable, Equatable, Codable {
        public var sequenceNumber: String
        public var streamSid: String
        public var dtmf: Digit

        public init(sequenceNumber: String, streamSid: String, dtmf: Digit) {
            self.sequenceNumber = sequenceNumber
            self.streamSid = streamSid
            self.dtmf = dtmf
        }

        /// `dtmf.dtmf`: Twilio's track is "inbound_track"; the digit 0-9, *, #, A-D.
        public struct Digit: Sendable, Equatable, Codable {
            public var track: String
            public var digit: String

            public init(track: String = "inbound_track", digit: String) {
                self.track = track
                self.digit = digit
            }
        }
    }

    /// The last message: the stream ended.
    public struct Stop: Sendable, Equatable, Codable {
        public var sequenceNumber: String
        public var streamSid: String
        public var stop: Sids

        public init(sequenceNumber: String, streamSid: String, stop: Sids) {
            self.sequenceNumber = sequenceNumber
            self.streamSid = streamSid
            self.stop = stop
        }

        /// `stop.stop`.
        public struct Sids: Sendable, Equatable, Codable {
            public var accountSid: String
            public var callSid: String

            public init(accountSid: String, callSid: String) {
                self.accountSid = accountSid
                self.callSid = callSid
            }
        }
    }

    /// A mark's `name`.
    public struct Name: Sendable, Equatable, Codable {
        public var name: String

        public init(name: String) { self.name = name }
    }

    private enum EventKey: String, CodingKey { case event }

    public init(from decoder: any Decoder) throws {
        let event = try decoder.container(keyedBy: EventKey.self).decode(String.self, forKey: .event)
        switch event {
        case "connected": self = .connected(try Connected(from: decoder))
        case "start": self = .start(try Start(from: decoder))
        case "media": self = .media(try Media(from: decoder))
        case "mark": self = .mark(try Mark(from: decoder))
        case "dtmf": self = .dtmf(try DTMF(from: decoder))
        case "stop": self = .stop(try Stop(from: decoder))
        default: throw MediaStreamMessageError.unknownEvent(event)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EventKey.self)
        try container.encode(event, forKey: .event)
        switch self {
        case .connected(let m): try m.encode(to: encoder)
        case .start(let m): try m.encode(to: encoder)
        case .media(let m): try m.encode(to: encoder)
        case .mark(let m): try m.encode(to: encoder)
        case .dtmf(let m): try m.encode(to: encoder)
        case .stop(let m): try m.encode(to: encoder)
        }
    }

    /// The `event` field.
    public var event: String {
        switch self {
        case .connected: "connected"
        case .start: "start"
        case .media: "media"
        case .mark: "mark"
        case .dtmf: "dtmf"
        case .stop: "stop"
        }
    }

    /// The message as one JSON text (keys sorted, so equal messages give equal text).
    public var json: String { MediaStreamJSON.encode(self) }

    /// Reads a message Twilio sends (for agents written against this module, and the tests).
    public static func decode(
        _ text: String, limit: Int = MediaStreamJSON.defaultLimit
    ) throws(MediaStreamMessageError)
        -> MediaStreamMessage
    {
        try MediaStreamJSON.decode(MediaStreamMessage.self, from: text, limit: limit)
    }
}
