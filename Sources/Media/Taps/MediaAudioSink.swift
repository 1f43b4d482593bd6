/// Which way a call's audio goes, seen from the trunk (Twilio Media Streams' words).
public enum MediaAudioTrack: String, Sendable, CaseIterable {
    /// What the carrier's side says: the trunk leg's audio, decoded.
    case inbound
    /// What the carrier's side hears: the audio sent to the trunk leg.
    case outbound
}

/// A consumer of a call's decoded audio (a recording, a media stream, answering-machine
/// detection, a SIPREC fork). Every 20 ms, once the call has audio, it gets one frame of each
/// track, time-aligned (silence where a side sent nothing that tick), on the call's media
/// thread: it must copy what it keeps into its own bounded queue and return, never block.
public protocol MediaAudioSink: AnyObject, Sendable {
    /// `inbound` and `outbound` hold `sampleRate / 50` samples each (8 or 16 kHz).
    func mediaAudio(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int)
}

/// Audio for the trunk in place of the platform leg's RTP (a voice agent on a WebSocket):
/// asked for one frame every 20 ms on the call's media thread; it must not block.
public protocol MediaAudioSource: AnyObject, Sendable {
    /// Fills `frame` (`sampleRate / 50` samples) and returns true, or returns false when it
    /// has nothing (silence is sent).
    func mediaAudioFrame(into frame: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) -> Bool
}
