import Foundation

extension Reports {
    /// Links to a call's capture and recordings, with players for the two WAVs.
    static func evidenceHTML(_ e: TestEvidence, linksFrom folder: String?) -> String {
        func link(_ path: String) -> String { xml(relativePath(path, from: folder)) }
        var parts: [String] = []
        if let p = e.pcap { parts.append("<a href=\"\(link(p))\">capture (pcap: SIP and RTP)</a>") }
        if let p = e.carrierWAV {
            parts.append(
                "<a href=\"\(link(p))\">what the carrier sent (WAV)</a> <audio controls preload=\"none\" src=\"\(link(p))\"></audio>"
            )
        }
        if let p = e.appWAV {
            parts.append(
                "<a href=\"\(link(p))\">what the carrier was sent (WAV)</a> <audio controls preload=\"none\" src=\"\(link(p))\"></audio>"
            )
        }
        return parts.isEmpty ? "" : "<p class=\"evidence\">Evidence: " + parts.joined(separator: " · ") + "</p>\n"
    }

    /// `path` relative to `folder` when both are absolute (`../evidence/x.pcap`), else `path`.
    static func relativePath(_ path: String, from folder: String?) -> String {
        guard let folder, path.hasPrefix("/"), folder.hasPrefix("/") else { return path }
        let target = path.split(separator: "/"), base = folder.split(separator: "/")
        var common = 0
        while common < min(target.count - 1, base.count), target[common] == base[common] { common += 1 }
        return (Array(repeating: "..", count: base.count - common) + target[common...].map(String.init)).joined(
            separator: "/")
    }
}
