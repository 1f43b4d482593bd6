import Media

/// Which of a call's tracks a stream carries.
public enum MediaStreamTracks: String, Sendable, Equatable, CaseIterable {
    case inbound, outbound, both

    /// The tracks named in `start`.
    public var tracks: [MediaStreamTrack] {
        switch self {
        case .inbound: [.inbound]
        case .outbound: [.outbound]
        case .both: [.inbound, .outbound]
        }
    }
}

/// Joins a `MediaStreamConnection` to a call's media. As a sink it sends the call's tracks to
/// the agent (converted to the stream's rate); as the call's audio source (a voice agent in
/// place of the platform leg) it plays the agent's audio to the trunk, echoing each mark once
/// the audio before it has gone out. Both run on the call's media thread and never block.
public final class MediaStreamBridge: MediaAudioSink, MediaAudioSource {
    public let connection: MediaStreamConnection
    public let tracks: MediaStreamTracks
    /// The agent's audio waiting to be played (used only as the call's source).
    public let player: MediaStreamPlayer

    public init(connection: MediaStreamConnection, tracks: MediaStreamTracks) {
        self.connection = connection
        self.tracks = tracks
        // The agent speaks mu-law at 8 kHz whatever the stream sends it (`agentSampleRate`).
        let rate = MediaStreamConnection.agentSampleRate
        player = MediaStreamPlayer(
            frameSamples: rate / 50, maxQueuedSamples: rate * 120,
            echo: { [weak connection] in connection?.sendMark($0) })
    }

    /// Takes the connection's events that concern playout (audio, mark, clear).
    public func handle(_ event: MediaStreamEvent) { player.handle(event) }

    public func mediaAudio(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int) {
        let rate = connection.configuration.audioFormat.sampleRate
        if tracks != .outbound {
            connection.sendAudio(PCMRateConversion.convert(inbound, from: sampleRate, to: rate), track: .inbound)
        }
        if tracks != .inbound {
            connection.sendAudio(PCMRateConversion.convert(outbound, from: sampleRate, to: rate), track: .outbound)
        }
    }

    public func mediaAudioFrame(into frame: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) -> Bool {
        guard let audio = player.nextFrame() else { return false }
        let converted = audio.withUnsafeBufferPointer {
            PCMRateConversion.convert($0, from: MediaStreamConnection.agentSampleRate, to: sampleRate)
        }
        let n = min(converted.count, frame.count)
        for i in 0..<n { frame[i] = converted[i] }
        if n < frame.count { UnsafeMutableBufferPointer(rebasing: frame[n...]).update(repeating: 0) }
        return true
    }
}
