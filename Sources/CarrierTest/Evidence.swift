import Capture
import Foundation
import IrisAPI
import Media

/// The evidence of one test call (`irisgw test --evidence DIR`): the gateway's capture of
/// the trunk leg as `DIR/<test>-<n>.pcap`, and what crossed it as audio,
/// `DIR/<test>-<n>-carrier.wav` (what the carrier sent) and `DIR/<test>-<n>-app.wav` (what
/// the gateway sent the carrier: the app's side, after transcoding), both decoded from the
/// capture's RTP by payload type.
enum Evidence {
    /// Writes the files; returns their absolute paths, and a note when something could
    /// not be written (the call's verdict does not depend on it).
    static func save(
        pcap: [UInt8], trace: SIPTraceDocument?, directory: String, test: String, iteration: Int
    )
        -> (evidence: TestEvidence, problem: String?)
    {
        let folder = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        let base = folder.appendingPathComponent("\(slug(test))-\(iteration)")
        var evidence = TestEvidence()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let pcapURL = URL(fileURLWithPath: base.path + ".pcap")
            try Data(pcap).write(to: pcapURL)
            evidence.pcap = pcapURL.path
            guard let port = trace?.ourMediaPort else { return (evidence, "no SDP of ours in the trace: no WAV files") }
            let packets = try PcapReader(bytes: pcap).packets.filter { $0.transport == .udp }
            let fromCarrier = packets.filter { $0.destination.port == port }.map(\.payload)
            let toCarrier = packets.filter { $0.source.port == port }.map(\.payload)
            for (name, stream) in [("carrier", fromCarrier), ("app", toCarrier)] where !stream.isEmpty {
                let audio = RTPAudioDecoder.decode(stream)
                guard !audio.samples.isEmpty else { continue }
                let url = URL(fileURLWithPath: base.path + "-\(name).wav")
                try Data(try WAVFile(sampleRate: audio.sampleRate, samples: audio.samples).encoded()).write(to: url)
                if name == "carrier" { evidence.carrierWAV = url.path } else { evidence.appWAV = url.path }
            }
            return (evidence, nil)
        } catch {
            return (evidence, "evidence not saved in \(directory): \(error)")
        }
    }

    /// "early media then answer" -> "early-media-then-answer": safe in a file name.
    static func slug(_ name: String) -> String {
        var out = ""
        for c in name.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber) {
                out.append(c)
            } else if !out.isEmpty && !out.hasSuffix("-") {
                out.append("-")
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out.isEmpty ? "test" : String(out.prefix(80))
    }
}
