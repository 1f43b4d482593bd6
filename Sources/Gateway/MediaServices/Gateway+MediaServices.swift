import Foundation
import IrisAPI

/// The control API's media-service verbs (docs/api.md, "Media services").
extension Gateway {
    /// `POST /v1/sessions/{roomId}/recording`: start, pause, resume or stop the recording.
    public func recording(roomId: String, _ request: RecordingRequest) throws(GatewayError) {
        try withSession(roomId) { s throws(GatewayError) in
            guard s.services.connected || request.action != "start" else {
                throw .wrongState("session \(roomId) is not answered yet (ask with recording on createWithTN or join)")
            }
            try s.recordingAction(request)
        }
    }

    /// `POST /v1/sessions/{roomId}/streams`: forks the call's audio to a WebSocket.
    public func startStream(roomId: String, _ request: StreamRequest) throws(GatewayError) -> StreamInfo {
        try withSession(roomId) { s throws(GatewayError) in try s.startFork(request) }
    }

    /// `DELETE /v1/sessions/{roomId}/streams/{streamId}`.
    public func stopStream(roomId: String, streamId: String) throws(GatewayError) {
        try withSession(roomId) { s throws(GatewayError) in try s.stopFork(streamId) }
    }

    /// The most a `GET .../recording` serves (a stereo WAV at 8 kHz holds 32 KB a second:
    /// about nine hours); longer files are fetched from the recordings directory.
    public static let maxServedRecordingBytes = 1 << 30

    /// `GET /v1/sessions/{roomId}/recording`: the recording's bytes and media type, of a live
    /// session (what is written so far: the WAV header is made whole every second) or an
    /// ended one (from its record). Blocks on the file and the record store: not for the SIP
    /// loop (the control API's workers call it).
    public func recordingFile(roomId: String) throws(GatewayError) -> (bytes: [UInt8], contentType: String) {
        guard Self.isValidID(roomId) else { throw .notFound(roomId) }
        let live: String? = ua.loop.sync { [self] in sessions[roomId]?.services.recording?.writer.path }
        // Live, the writer knows; after, the record does (or the file's own name says: records
        // are written behind the call).
        let directory = configuration.recordingsDirectory
        let candidates =
            [live ?? records.record(roomId: roomId)?.recordingPath].compactMap { $0 }
            + ["wav", "ogg"].map { directory + "/" + roomId + "." + $0 }
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw GatewayError(IrisCode.incorrectParams, .notFound, "session \(roomId) has no recording")
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = (attributes[.size] as? NSNumber)?.intValue
        else {
            throw GatewayError(
                IrisCode.incorrectParams, .notFound, "session \(roomId)'s recording is gone (retention, or moved)")
        }
        guard size <= Self.maxServedRecordingBytes else {
            throw .unavailable("session \(roomId)'s recording is \(size) bytes: fetch it from \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unavailable("session \(roomId)'s recording could not be read")
        }
        return (Array(data), path.hasSuffix(".ogg") ? "audio/ogg" : "audio/wav")
    }
}
