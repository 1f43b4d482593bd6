/// How a call is recorded: file format, channel layout and the writer's bounds.
public struct CallRecordingConfiguration: Sendable, Equatable {
    /// The file format.
    public enum Format: String, Sendable, Equatable, CaseIterable {
        /// RIFF/WAVE, 16-bit PCM at the call's rate: large, readable by anything.
        case wav
        /// Opus in Ogg (RFC 7845): about a tenth of the WAV's size.
        case ogg
    }

    /// Which audio goes to which channel.
    public enum Layout: String, Sendable, Equatable, CaseIterable {
        /// Two channels: left the trunk's audio (the carrier side), right the app's.
        case stereo
        /// One channel: the two sides summed (clamped to 16 bits).
        case mixed

        /// Channels in the file.
        public var channels: Int { self == .stereo ? 2 : 1 }
    }

    /// Default `.wav`.
    public var format: Format
    /// Default `.stereo`.
    public var layout: Layout
    /// The PCM rate of the frames appended: 8000 (default, G.711 calls) or 16000 (G.722
    /// calls); any rate Opus runs at (`Opus.supportedSampleRates`) is accepted.
    public var sampleRate: Int
    /// Frames (20 ms each) the queue between the caller and the writer thread holds before
    /// the oldest is dropped; default 250 (5 seconds of a stalled disk).
    public var queueFrames: Int
    /// Seconds between the moments the file is made whole on disk (WAV sizes patched, the
    /// Ogg page in progress written); default 1. At most this much audio is lost in a crash
    /// (plus what the queue holds). At least 0.01.
    public var flushInterval: Double
    /// Opus bits per second for `.ogg`; nil (default): 24000 per channel. Less makes the
    /// encoder narrow the stereo image, and one side leaks into the other's channel (at 16000
    /// per channel, 16 kHz audio: about -19 dB).
    public var opusBitrate: Int?

    /// Settings with the documented defaults.
    public init(
        format: Format = .wav, layout: Layout = .stereo, sampleRate: Int = 8_000, queueFrames: Int = 250,
        flushInterval: Double = 1, opusBitrate: Int? = nil
    ) {
        self.format = format
        self.layout = layout
        self.sampleRate = sampleRate
        self.queueFrames = queueFrames
        self.flushInterval = flushInterval
        self.opusBitrate = opusBitrate
    }

    /// Samples per channel in one 20 ms frame.
    public var frameSamples: Int { sampleRate / 50 }

    /// Why these settings cannot record, nil when they can.
    public var problem: String? {
        if !Opus.supportedSampleRates.contains(Int32(clamping: sampleRate)) {
            return "sample rate \(sampleRate) is not one of \(Opus.supportedSampleRates.map(String.init))"
        }
        if queueFrames < 1 { return "queue of \(queueFrames) frames (at least 1)" }
        if !(flushInterval >= 0.01) { return "flush interval of \(flushInterval) s (0.01 at least)" }
        if let opusBitrate, !(500...512_000).contains(opusBitrate) {
            return "Opus bitrate \(opusBitrate) (500 to 512000)"
        }
        return nil
    }
}

/// Why a recording could not be started or completed.
public enum CallRecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The settings cannot record (`CallRecordingConfiguration.problem`).
    case invalidConfiguration(String)
    /// The file could not be created or written (`reason` is the system's text). Writing
    /// stops at the first failure; what was written before stays.
    case io(path: String, reason: String)
    /// The Opus encoder failed.
    case codec(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidConfiguration(let problem): "call recording: invalid \(problem)"
        case .io(let path, let reason): "call recording \(path): \(reason)"
        case .codec(let reason): "call recording: \(reason)"
        }
    }
}

/// What a finished recording holds.
public struct CallRecordingSummary: Sendable, Equatable {
    /// A stretch of the file written as silence because the recording was paused.
    public struct PausedInterval: Sendable, Equatable {
        /// Seconds from the start of the file.
        public var start: Double
        /// Seconds from the start of the file.
        public var end: Double

        /// `start` to `end` seconds.
        public init(start: Double, end: Double) {
            self.start = start
            self.end = end
        }
    }

    /// The file.
    public var path: String
    /// Seconds of audio in the file (paused and dropped stretches included, as silence).
    public var duration: Double
    /// The file's size in bytes.
    public var bytes: Int
    /// The paused stretches, in order.
    public var pausedIntervals: [PausedInterval]
    /// 20 ms frames lost because the queue was full (a stalled disk); written as silence.
    public var droppedFrames: Int
}
