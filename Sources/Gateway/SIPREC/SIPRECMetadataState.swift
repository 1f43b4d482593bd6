import Crypto
import Media
import SIP

/// The recording session's metadata as the call changes (RFC 7865): the session and stream
/// ids made once, each participant's id kept while its AOR stays, the times they joined and
/// left. A plain value; the recorder sends `metadata` complete each time (`datamode` complete).
struct SIPRECMetadataState: Sendable, Equatable {
    /// The label of each track's `m=` line: the carrier's side first (RFC 7866 §7.1.1 lets
    /// the client choose; the metadata says who sends which).
    static let labels: [MediaAudioTrack: String] = [.inbound: "1", .outbound: "2"]
    /// The tracks in `m=` line order.
    static let tracks: [MediaAudioTrack] = [.inbound, .outbound]

    struct Entry: Sendable, Equatable {
        var id: String
        var participant: SIPRECParticipant
        var associated: String
        var disassociated: String?
    }

    let sessionID: String
    let sipSessionID: String
    let startTime: String
    let streamIDs: [MediaAudioTrack: String]
    private(set) var entries: [Entry] = []
    private(set) var stopTime: String?

    /// A new session for the call `sipSessionID` (its Call-ID) starting `now` (xs:dateTime).
    init(sipSessionID: String, participants: [SIPRECParticipant], now: String, newID: () -> String = Self.newID) {
        sessionID = newID()
        self.sipSessionID = sipSessionID
        startTime = now
        var streams: [MediaAudioTrack: String] = [:]
        for track in Self.tracks { streams[track] = newID() }
        streamIDs = streams
        update(participants, now: now, newID: newID)
    }

    /// Who is in the call now: an AOR seen before keeps its id (and rejoins if it had left),
    /// a new one joins `now`, one no longer listed leaves `now` (and sends nothing).
    mutating func update(_ participants: [SIPRECParticipant], now: String, newID: () -> String = Self.newID) {
        for i in entries.indices where !participants.contains(where: { $0.aor == entries[i].participant.aor }) {
            if entries[i].disassociated == nil { entries[i].disassociated = now }
            entries[i].participant.sends = []
            entries[i].participant.receives = []
        }
        for p in participants {
            if let i = entries.firstIndex(where: { $0.participant.aor == p.aor }) {
                entries[i].participant = p
                if entries[i].disassociated != nil {
                    entries[i].disassociated = nil
                    entries[i].associated = now
                }
            } else {
                entries.append(Entry(id: newID(), participant: p, associated: now))
            }
        }
    }

    /// The end: the session's stop time, and everyone still in it leaves.
    mutating func stop(now: String) {
        stopTime = now
        for i in entries.indices where entries[i].disassociated == nil { entries[i].disassociated = now }
    }

    /// The document to send.
    var metadata: RecordingMetadata {
        RecordingMetadata(
            sessionID: sessionID, sipSessionID: sipSessionID, startTime: startTime, stopTime: stopTime,
            participants: entries.map { e in
                RecordingMetadata.Participant(
                    id: e.id, aor: e.participant.aor, name: e.participant.name,
                    sends: e.participant.sends.compactMap { streamIDs[$0] },
                    receives: e.participant.receives.compactMap { streamIDs[$0] }, associated: e.associated,
                    disassociated: e.disassociated)
            },
            streams: Self.tracks.map { RecordingMetadata.Stream(id: streamIDs[$0]!, label: Self.labels[$0]!) })
    }

    /// The metadata as a body part of the INVITE (RFC 7866 §9.1).
    var part: MultipartBody.Part {
        MultipartBody.Part(
            headers: [
                ("Content-Type", RecordingMetadata.contentType),
                ("Content-Disposition", "recording-session")
            ],
            body: Array(metadata.serialize().utf8))
    }

    /// RFC 7865 §6.1: ids are base64 of a UUID's 16 bytes.
    static func newID() -> String { Base64.encode(Crypto.randomBytes(count: 16)) }
}
