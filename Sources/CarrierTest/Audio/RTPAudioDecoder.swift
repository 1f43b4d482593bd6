import Media

/// One RTP stream turned into audio, for the evidence WAV files of a call's capture.
///
/// Packets are given in arrival order (raw RTP bytes). Audio payload types: 0 PCMU and
/// 8 PCMA (8000 Hz), 9 G.722 (16000 Hz, spandsp through the Media module); the output
/// is at 16000 Hz when the stream has G.722 (G.711 then doubled by linear interpolation),
/// else 8000 Hz. Each packet is placed by its RTP timestamp (all three codecs use an
/// 8000 Hz RTP clock): gaps are silence, a packet at a timestamp already placed is dropped
/// (duplicates), late packets go where they belong (reordering). A new SSRC, or a timestamp
/// more than 10 s from the stream's, starts a new run after what is there. RFC 4733
/// telephone-event and comfort noise (13) are skipped silently; every other payload type,
/// an unparsable packet, and a packet that would land before its run's start are skipped
/// and counted.
public struct RTPAudioDecoder {
    /// Payload types named when the caller gives none: the static ones and the usual
    /// dynamic number for telephone-event.
    public static let defaultPayloadTypes: [UInt8: String] = [
        0: "PCMU", 8: "PCMA", 9: "G722", 13: "CN", 101: "telephone-event"
    ]

    enum Kind { case pcmu, pcma, g722, ignored, unknown }

    static func kind(_ name: String?) -> Kind {
        switch name?.uppercased() {
        case "PCMU": .pcmu
        case "PCMA": .pcma
        case "G722": .g722
        case "CN", "TELEPHONE-EVENT": .ignored
        default: .unknown
        }
    }

    /// Decodes the packets. `payloadTypes` names payload types (`"PCMU"`, `"PCMA"`,
    /// `"G722"`, `"telephone-event"`, `"CN"`; case-insensitive) over `defaultPayloadTypes`.
    public static func decode(
        _ packets: [[UInt8]], payloadTypes: [UInt8: String]? = nil
    ) -> (samples: [Int16], sampleRate: Int, skipped: Int) {
        let names = defaultPayloadTypes.merging(payloadTypes ?? [:]) { _, given in given }
        struct Parsed { var kind: Kind; var ssrc: UInt32; var timestamp: UInt32; var payload: [UInt8] }
        var skipped = 0
        var parsed: [Parsed] = []
        for bytes in packets {
            let view: RTPPacketView
            do { view = try bytes.withUnsafeBytes { raw throws(RTPParseError) in try RTPPacketView.parse(raw) } } catch
            {
                skipped += 1
                continue
            }
            let kind = kind(names[view.payloadType])
            switch kind {
            case .ignored: continue
            case .unknown: skipped += 1
            default:
                parsed.append(
                    Parsed(
                        kind: kind, ssrc: view.ssrc, timestamp: view.timestamp, payload: Array(bytes[view.payloadRange])
                    ))
            }
        }
        let wide = parsed.contains { $0.kind == .g722 }
        let rate = wide ? 16_000 : 8_000
        let perTick = rate / 8_000

        var out: [Int16] = []
        // The current run: its SSRC, the extended timestamp of its origin and where that
        // origin sits in `out`, the last extended timestamp (for unwrapping), what is placed.
        var ssrc: UInt32?
        var origin = 0, base = 0, last = 0
        var placed: Set<Int> = []
        var g722: G722Decoder?
        var pcm: [Int16] = []
        for p in parsed {
            var extended = last + Int(Int32(bitPattern: p.timestamp &- UInt32(truncatingIfNeeded: last)))
            if ssrc != p.ssrc || abs(extended - last) > 10 * 8_000 {
                ssrc = p.ssrc
                origin = out.count
                base = Int(p.timestamp)
                extended = base
                placed = []
                g722 = nil
            }
            last = extended
            let position = origin + (extended - base) * perTick
            guard position >= origin else {
                skipped += 1
                continue
            }
            guard placed.insert(extended).inserted else { continue }  // a duplicate
            switch p.kind {
            case .pcmu: G711.decodeULaw(p.payload, into: &pcm)
            case .pcma: G711.decodeALaw(p.payload, into: &pcm)
            default:
                if g722 == nil { g722 = try? G722Decoder() }
                guard let decoder = g722 else { skipped += 1; continue }
                decoder.decode(p.payload, into: &pcm)
            }
            if wide && p.kind != .g722 { pcm = doubled(pcm) }
            if out.count < position + pcm.count {
                out += [Int16](repeating: 0, count: position + pcm.count - out.count)
            }
            for i in pcm.indices { out[position + i] = pcm[i] }
        }
        return (out, rate, skipped)
    }

    /// 8 kHz to 16 kHz: each sample, then the mean of it and the next.
    static func doubled(_ x: [Int16]) -> [Int16] {
        var y: [Int16] = []
        y.reserveCapacity(x.count * 2)
        for i in x.indices {
            y.append(x[i])
            let next = i + 1 < x.count ? x[i + 1] : x[i]
            y.append(Int16((Int(x[i]) + Int(next)) / 2))
        }
        return y
    }
}
