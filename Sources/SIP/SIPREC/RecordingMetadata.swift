/// The metadata a session recording client sends a recording server (RFC 7865, carried as
/// RFC 7866 says: `application/rs-metadata+xml` with `Content-Disposition: recording-session`):
/// the communication session, its participants and which recorded stream each one sends.
///
/// ```
/// <recording xmlns='urn:ietf:params:xml:ns:recording:1'>
///   <datamode>complete</datamode>
///   <session session_id="..."><sipSessionID>...</sipSessionID><start-time>...</start-time></session>
///   <participant participant_id="..."><nameID aor="sip:+1555...@host"><name>...</name></nameID></participant>
///   <participantsessionassoc participant_id="..." session_id="..."><associate-time>...</associate-time></participantsessionassoc>
///   <stream stream_id="..." session_id="..."><label>1</label></stream>
///   <participantstreamassoc participant_id="..."><send>stream id</send><recv>stream id</recv></participantstreamassoc>
/// </recording>
/// ```
/// A plain value: the recording client builds it from the call and sends it again (complete)
/// when something changes (hold, a transfer, the end: `stop-time` and `disassociate-time`).
public struct RecordingMetadata: Sendable, Equatable {
    public static let contentType = "application/rs-metadata+xml"
    public static let namespace = "urn:ietf:params:xml:ns:recording:1"

    public struct Participant: Sendable, Equatable {
        /// RFC 7865 identifiers are base64 of 16 random bytes (a UUID).
        public var id: String
        public var aor: String
        public var name: String?
        /// The streams (by id) this participant sends and receives.
        public var sends: [String]
        public var receives: [String]
        public var associated: String
        /// When it left the session (the end, or a transfer away); nil while it takes part.
        public var disassociated: String?

        public init(
            id: String, aor: String, name: String? = nil, sends: [String], receives: [String], associated: String,
            disassociated: String? = nil
        ) {
            self.id = id
            self.aor = aor
            self.name = name
            self.sends = sends
            self.receives = receives
            self.associated = associated
            self.disassociated = disassociated
        }
    }

    public struct Stream: Sendable, Equatable {
        public var id: String
        /// The `a=label` of its `m=` line in the recording session's SDP.
        public var label: String
        public init(id: String, label: String) {
            self.id = id
            self.label = label
        }
    }

    public var sessionID: String
    /// The recorded call's Call-ID (RFC 7865 `sipSessionID`).
    public var sipSessionID: String
    public var startTime: String
    public var stopTime: String?
    public var participants: [Participant]
    public var streams: [Stream]

    public init(
        sessionID: String, sipSessionID: String, startTime: String, stopTime: String? = nil,
        participants: [Participant], streams: [Stream]
    ) {
        self.sessionID = sessionID
        self.sipSessionID = sipSessionID
        self.startTime = startTime
        self.stopTime = stopTime
        self.participants = participants
        self.streams = streams
    }

    /// The XML document (UTF-8), every value escaped.
    public func serialize() -> String {
        var x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        x += "<recording xmlns='\(Self.namespace)'>\n  <datamode>complete</datamode>\n"
        x += "  <session session_id=\"\(Self.escape(sessionID))\">\n"
        x += "    <sipSessionID>\(Self.escape(sipSessionID))</sipSessionID>\n"
        x += "    <start-time>\(Self.escape(startTime))</start-time>\n"
        if let stopTime { x += "    <stop-time>\(Self.escape(stopTime))</stop-time>\n" }
        x += "  </session>\n"
        for p in participants {
            x += "  <participant participant_id=\"\(Self.escape(p.id))\">\n"
            x += "    <nameID aor=\"\(Self.escape(p.aor))\">"
            x += p.name.map { "\n      <name>\(Self.escape($0))</name>\n    " } ?? ""
            x += "</nameID>\n  </participant>\n"
        }
        for p in participants {
            x += "  <participantsessionassoc participant_id=\"\(Self.escape(p.id))\""
            x += " session_id=\"\(Self.escape(sessionID))\">\n"
            x += "    <associate-time>\(Self.escape(p.associated))</associate-time>\n"
            if let gone = p.disassociated { x += "    <disassociate-time>\(Self.escape(gone))</disassociate-time>\n" }
            x += "  </participantsessionassoc>\n"
        }
        for s in streams {
            x += "  <stream stream_id=\"\(Self.escape(s.id))\" session_id=\"\(Self.escape(sessionID))\">\n"
            x += "    <label>\(Self.escape(s.label))</label>\n  </stream>\n"
        }
        for p in participants {
            x += "  <participantstreamassoc participant_id=\"\(Self.escape(p.id))\">\n"
            for s in p.sends { x += "    <send>\(Self.escape(s))</send>\n" }
            for s in p.receives { x += "    <recv>\(Self.escape(s))</recv>\n" }
            x += "  </participantstreamassoc>\n"
        }
        return x + "</recording>\n"
    }

    /// XML 1.0 character data and attribute values: the five predefined entities; control
    /// characters XML cannot carry are dropped.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
