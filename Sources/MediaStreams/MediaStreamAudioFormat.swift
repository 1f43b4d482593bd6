import Media

/// How the gateway's audio travels to the agent: Twilio's mu-law at 8 kHz (the default, what
/// every Twilio agent takes) or 16-bit linear PCM at 16 kHz, network byte order
/// (`audio/l16;rate=16000`, RFC 3551 §4.5.11) for agents that want wideband. Frames are 20 ms.
public enum MediaStreamAudioFormat: Sendable, Equatable {
    case mulaw8k
    case l16at16k

    /// `start.mediaFormat.encoding`.
    public var encoding: String {
        switch self {
        case .mulaw8k: "audio/x-mulaw"
        case .l16at16k: "audio/l16;rate=16000"
        }
    }

    public var sampleRate: Int { self == .mulaw8k ? 8_000 : 16_000 }

    /// Samples in 20 ms.
    public var frameSamples: Int { sampleRate / 50 }

    /// `start.mediaFormat`.
    public var mediaFormat: MediaStreamMessage.MediaFormat {
        MediaStreamMessage.MediaFormat(encoding: encoding, sampleRate: sampleRate, channels: 1)
    }

    /// `samples` in this format's bytes.
    public func encode(_ samples: [Int16]) -> [UInt8] {
        switch self {
        case .mulaw8k:
            var bytes: [UInt8] = []
            G711.encodeULaw(samples, into: &bytes)
            return bytes
        case .l16at16k:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(samples.count * 2)
            for s in samples {
                let u = UInt16(bitPattern: s)
                bytes.append(UInt8(u >> 8))
                bytes.append(UInt8(u & 0xFF))
            }
            return bytes
        }
    }
}
