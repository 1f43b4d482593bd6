import Foundation
import Media

/// A recording as the gateway serves it, read for what an `expectRecording` step checks:
/// the format, the channels and the length. WAV from its header (Media's `WAVFile`);
/// Ogg Opus (RFC 7845) from the OpusHead's channel count and pre-skip and the last page's
/// granule position (48 kHz samples).
struct RecordingFile: Sendable, Equatable {
    /// `wav` or `ogg`.
    var format: String
    var channels: Int
    var durationSec: Double

    /// Why the bytes are not a recording.
    struct Unreadable: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    init(format: String, channels: Int, durationSec: Double) {
        self.format = format
        self.channels = channels
        self.durationSec = durationSec
    }

    init(bytes: [UInt8]) throws(Unreadable) {
        if bytes.starts(with: "RIFF".utf8) {
            let wav: WAVFile
            do { wav = try WAVFile(bytes: bytes) } catch { throw Unreadable(description: error.description) }
            self.init(format: "wav", channels: wav.channels.count, durationSec: wav.duration)
        } else if bytes.starts(with: "OggS".utf8) {
            self = try Self.ogg(bytes)
        } else {
            throw Unreadable(description: "neither WAV nor Ogg (\(bytes.count) bytes)")
        }
    }

    /// The pages in order (RFC 3533 §6): 27 header bytes, the lacing table, the body. The
    /// first packet is the OpusHead (§5.1: channel count at byte 9, pre-skip at 10-11).
    private static func ogg(_ bytes: [UInt8]) throws(Unreadable) -> RecordingFile {
        var at = 0
        var head: (channels: Int, preSkip: Int)?
        var granule: Int64 = 0
        while at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[at + 26])
            guard at + 27 + segments <= bytes.count else { break }
            let bodyStart = at + 27 + segments
            let bodyLength = bytes[(at + 27)..<bodyStart].reduce(0) { $0 + Int($1) }
            guard bodyStart + bodyLength <= bytes.count else { break }  // a page still being written
            if head == nil {
                let packet = bytes[bodyStart..<(bodyStart + bodyLength)]
                guard packet.count >= 19, packet.starts(with: "OpusHead".utf8) else {
                    throw Unreadable(description: "an Ogg file whose first packet is not an OpusHead")
                }
                let p = packet.startIndex
                head = (Int(packet[p + 9]), Int(packet[p + 10]) | Int(packet[p + 11]) << 8)
            }
            let g = (0..<8).reduce(Int64(0)) { $0 | Int64(bytes[at + 6 + $1]) << (8 * $1) }
            if g > 0 { granule = g }  // -1 (all ones) is a page where no packet ends
            at = bodyStart + bodyLength
        }
        guard let head else { throw Unreadable(description: "an Ogg file without an OpusHead page") }
        return RecordingFile(
            format: "ogg", channels: head.channels, durationSec: Double(max(0, granule - Int64(head.preSkip))) / 48_000)
    }

    /// What is wrong with this file for `step`, or nil.
    func mismatch(_ step: RecordingStep) -> String? {
        var wrong: [String] = []
        if let f = step.format, f != format { wrong.append("format \(f)") }
        if let c = step.channels, c != channels { wrong.append("\(c) channel\(c == 1 ? "" : "s")") }
        if durationSec < step.minDurationSec { wrong.append("at least \(step.minDurationSec) s") }
        return wrong.isEmpty ? nil : "expected " + wrong.joined(separator: ", ") + "; got " + summary
    }

    /// "a 2-channel wav of 3.42 s".
    var summary: String {
        "a \(channels)-channel \(format) of " + String(format: "%.2f s", durationSec)
    }
}
