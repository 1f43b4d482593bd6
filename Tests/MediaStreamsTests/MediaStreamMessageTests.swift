import Foundation
import MediaStreams
import Testing

/// The messages both ways as Twilio's Media Streams documentation shows them
/// (twilio.com/docs/voice/media-streams/websocket-messages): each decodes to its value and
/// encodes back to the same JSON; malformed agent messages are refused with their error.
@Suite struct MediaStreamMessageTests {
    /// Twilio's examples of what it sends (their field order and placeholders).
    static let twilioMessages: [String] = [
        #"{"event": "connected", "protocol": "Call", "version": "1.0.0"}"#,
        #"""
        {"event": "start", "sequenceNumber": "1",
         "start": {"accountSid": "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                   "callSid": "CAXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "tracks": ["inbound"],
                   "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
                   "customParameters": {"FirstName": "Jane", "LastName": "Doe", "RemoteParty": "Bob"}},
         "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}
        """#,
        #"""
        {"event": "media", "sequenceNumber": "3",
         "media": {"track": "outbound", "chunk": "1", "timestamp": "5",
                   "payload": "no+JhoaJjpzSHxAKBgYJDhtEopGKh4aIjZm7JhILBwYIDRg1qZSLh4aIjJevLBUMBwYHCxUsr5mNiIaHioyVrnQdEAkHBwoQHDyikYqHhomNmrsnEgsHBgcMEy2smY6IhoaJjZeuLhYNCQcHChAZNqGTioeGh4uRnbJKHhEMCQoMEhwzqJiOiYeIio+YpkkeEw0KCQsPFiNCqZuQi4mJi5CZpk8iFhAMCgsOFB8uZaOZkYyKioyRmKNbKBgSDg0NEBYdKVGnnZWQjo6PkpikTysZFBEQEBIXHCdFraOblZOSk5abo7ZLKx8aFxUUFhkdJC9crqGcmZeXmZufrOU8KB8bGRkaHB8kLD6vqKKem5ubnqCmre44Kx8dHBscHR8kKTJBt6unpaSjpKWpq7Y/Oy4qJSIhIiMlKSsuNThPq7iwrqyrq6yusrfc/UY7NzIuLCsrLC0xND1JdbwAAA=="},
         "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}
        """#,
        #"""
        {"event": "dtmf", "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "sequenceNumber": "5",
         "dtmf": {"track": "inbound_track", "digit": "1"}}
        """#,
        #"""
        {"event": "mark", "sequenceNumber": "4", "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
         "mark": {"name": "my label"}}
        """#,
        #"""
        {"event": "stop", "sequenceNumber": "5",
         "stop": {"accountSid": "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "callSid": "CAXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"},
         "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}
        """#
    ]

    /// Twilio's examples of what an agent sends back.
    static let agentMessages: [String] = [
        #"""
        {"event": "media", "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
         "media": {"payload": "a3242sa0AAAA"}}
        """#,
        #"{"event": "mark", "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "mark": {"name": "my label"}}"#,
        #"{"event": "clear", "streamSid": "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}"#
    ]

    /// The same JSON value, whatever the key order and spacing.
    static func sameJSON(_ a: String, _ b: String) -> Bool {
        guard let x = try? JSONSerialization.jsonObject(with: Data(a.utf8)) as? NSDictionary,
            let y = try? JSONSerialization.jsonObject(with: Data(b.utf8)) as? NSDictionary
        else { return false }
        return x == y
    }

    @Test(arguments: twilioMessages)
    func twilioMessageRoundTrips(_ text: String) throws {
        let message = try MediaStreamMessage.decode(text)
        #expect(Self.sameJSON(message.json, text), "\(message.json)")
        #expect(try MediaStreamMessage.decode(message.json) == message)
    }

    @Test func fieldsLandWhereTwilioPutsThem() throws {
        guard case .start(let start) = try MediaStreamMessage.decode(Self.twilioMessages[1]) else {
            Issue.record("not a start")
            return
        }
        #expect(start.sequenceNumber == "1")
        #expect(start.start.mediaFormat == MediaStreamAudioFormat.mulaw8k.mediaFormat)
        #expect(start.start.customParameters["RemoteParty"] == "Bob")
        #expect(start.start.tracks == ["inbound"])
        guard case .media(let media) = try MediaStreamMessage.decode(Self.twilioMessages[2]) else {
            Issue.record("not a media")
            return
        }
        #expect(media.media.track == "outbound" && media.media.chunk == "1" && media.media.timestamp == "5")
    }

    @Test(arguments: agentMessages)
    func agentMessageRoundTrips(_ text: String) throws {
        let message = try AgentMessage.decode(text)
        #expect(Self.sameJSON(message.json, text), "\(message.json)")
        #expect(try AgentMessage.decode(message.json) == message)
    }

    @Test func agentAudioIsTheBase64Payload() throws {
        let message = try AgentMessage.decode(Self.agentMessages[0])
        #expect(message.audio == [107, 125, 184, 218, 198, 180, 0, 0, 0])
    }

    static let malformed: [(String, MediaStreamMessageError)] = [
        ("", .notJSON("")),
        ("not json", .notJSON("")),
        (#"["media"]"#, .notJSON("")),
        (#"{"streamSid": "MZ1"}"#, .missingField("event")),
        (#"{"event": 7, "streamSid": "MZ1"}"#, .wrongType(field: "event", expected: "a string")),
        (#"{"event": "start", "streamSid": "MZ1"}"#, .unknownEvent("start")),
        (#"{"event": "media", "streamSid": "MZ1"}"#, .missingField("media")),
        (#"{"event": "media", "streamSid": "MZ1", "media": {}}"#, .missingField("media.payload")),
        (
            #"{"event": "media", "streamSid": "MZ1", "media": {"payload": 5}}"#,
            .wrongType(field: "media.payload", expected: "a string")
        ),
        (
            #"{"event": "media", "streamSid": "MZ1", "media": {"payload": "!!!!"}}"#,
            .invalidValue(field: "media.payload", reason: "not base64")
        ),
        (
            #"{"event": "media", "streamSid": "MZ1", "media": {"payload": ""}}"#,
            .invalidValue(field: "media.payload", reason: "no audio")
        ),
        (#"{"event": "media", "media": {"payload": "AAAA"}}"#, .missingField("streamSid")),
        (#"{"event": "clear", "streamSid": ""}"#, .invalidValue(field: "streamSid", reason: "empty")),
        (#"{"event": "mark", "streamSid": "MZ1", "mark": "x"}"#, .wrongType(field: "mark", expected: "an object")),
        (
            #"{"event": "mark", "streamSid": "MZ1", "mark": {"name": ""}}"#,
            .invalidValue(field: "mark.name", reason: "empty")
        ),
        (
            #"{"event": "mark", "streamSid": "MZ1", "mark": {"name": null}}"#,
            .wrongType(field: "mark.name", expected: "a string")
        )
    ]

    @Test(arguments: malformed)
    func malformedAgentMessageIsRefused(_ text: String, _ expected: MediaStreamMessageError) {
        #expect {
            _ = try AgentMessage.decode(text)
        } throws: { error in
            guard let error = error as? MediaStreamMessageError else { return false }
            // A JSON syntax error's wording is Foundation's; the kind is what counts.
            if case .notJSON = expected, case .notJSON = error { return true }
            return error == expected
        }
    }

    @Test func oversizedMessageIsRefusedBeforeParsing() {
        let text = #"{"event": "clear", "streamSid": "MZ1", "pad": ""# + String(repeating: "x", count: 2_000) + #""}"#
        #expect(throws: MediaStreamMessageError.tooLarge(bytes: text.utf8.count, limit: 1_000)) {
            try AgentMessage.decode(text, limit: 1_000)
        }
    }

    @Test func refusalsNameTheField() {
        #expect(MediaStreamMessageError.missingField("media.payload").description == "missing field media.payload")
        #expect(
            MediaStreamMessageError.invalidValue(field: "mark.name", reason: "empty").description
                == "field mark.name is invalid: empty")
    }
}
