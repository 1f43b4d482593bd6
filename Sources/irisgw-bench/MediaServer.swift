import Foundation
import IOCore
import Media

/// `irisgw-bench media-server [--complexity N] [--bitrate BPS] [--opus-rate HZ]`: irisgw's media
/// engine alone in a process (one media thread), driven by line commands on stdin, so a bench
/// can pin it to a CPU and read its whole-process CPU time like any other media server's. The
/// options are the platform leg's Opus settings (default complexity 5, libopus's bitrate, the
/// call's 8 kHz; `--opus-rate 48000` runs the encoder at 48 kHz, `OpusSettings.sampleRate`).
///
/// Protocol (one line each way):
/// - on start it prints `ready`;
/// - `open transcode|relay T,P T,P ...` opens one call per pair (the generator's trunk and
///   platform ports on 127.0.0.1): trunk leg PCMU (payload type 0), platform leg Opus (those
///   settings, payload type 111) or PCMU for relay, remotes set to the generator's sockets; it answers
///   `ok T,P,PT ...` (the engine's trunk port, platform port and platform payload type per call)
///   or `error <why>`;
/// - `close` closes every call and answers `ok concealed=N late=N received=N sent=N` (the
///   engine's counters summed over every leg); `quit` or the end of stdin stops it.
enum MediaServer {
    /// Below Linux's ephemeral ports (32768-60999), where the generator's sockets are: the
    /// engine sends each leg's RTCP to the generator's port + 1, and with both in one range
    /// that can be an RTP socket of the engine itself (whose leg may then latch onto it).
    /// 6,000 port pairs: the relay schedule's last step (2,000 calls, two pairs each) fits; at
    /// 2,500 pairs a 1,500-call step ran out and ended the whole comparison.
    static let portRange: ClosedRange<UInt16> = 10_000...21_999

    static func main(_ args: [String]) throws {
        var opus = AudioCodec.OpusSettings(complexity: 5)
        var budget: Double?
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "--complexity": opus.complexity = it.next().flatMap { Int32($0) } ?? opus.complexity
            case "--bitrate": opus.bitrate = it.next().flatMap { Int32($0) }
            case "--opus-rate": opus.sampleRate = it.next().flatMap { Int($0) }
            // Admission as the gateway does it: a call past the load budget (per cent) is
            // refused, and answered "0,0,0" (the generator leaves it out).
            case "--budget": budget = it.next().flatMap { Double($0) }.map { $0 / 100 }
            default: throw NGClient.Failure(description: "media-server: unknown argument \(a)")
            }
        }
        // IRISGW_BENCH_MEDIA_IO=uring|epoll forces the media I/O path (the two compared in one run).
        let io = ProcessInfo.processInfo.environment["IRISGW_BENCH_MEDIA_IO"].flatMap(MediaIOMode.init) ?? .automatic
        let engine = try MediaEngine(
            configuration: .init(threads: 1, portRange: portRange, portQuarantine: 0, io: io))
        defer { engine.shutdown() }
        var calls: [MediaCall] = []
        func reply(_ s: String) {
            print(s)
            fflush(nil)
        }
        reply("ready")
        while let line = readLine() {
            let f = line.split(separator: " ")
            switch f.first {
            case "open":
                guard f.count >= 2, let mode = LoadMode(rawValue: String(f[1])) else {
                    reply("error usage: open transcode|relay T,P ..."); continue
                }
                var answer: [String] = []
                do {
                    for pair in f.dropFirst(2) {
                        let p = pair.split(separator: ",").compactMap { Int($0) }
                        guard p.count == 2 else { throw NGClient.Failure(description: "bad pair \(pair)") }
                        let platform: MediaLegConfiguration =
                            mode == .transcode
                            ? .init(codec: .opus(opus), payloadType: 111)
                            : .init(codec: .pcmu, payloadType: 0)
                        var configuration = MediaCallConfiguration(
                            trunk: .init(codec: .pcmu, payloadType: 0), platform: platform, rtpTimeout: 0)
                        configuration.playoutOnArrival = MediaBench.playoutOnArrival
                        configuration.trunk.remote = SocketAddress(host: "127.0.0.1", port: p[0])
                        configuration.platform.remote = SocketAddress(host: "127.0.0.1", port: p[1])
                        do {
                            let call = try engine.openCall(configuration, loadBudget: budget)
                            calls.append(call)
                            answer.append(
                                "\(call.trunkAddress.port),\(call.platformAddress.port),\(platform.payloadType)")
                        } catch is MediaOverloadError {
                            answer.append("0,0,0")
                        }
                    }
                    reply("ok " + answer.joined(separator: " "))
                } catch {
                    reply("error \(error)")
                }
            case "close":
                // What the engine counted, summed over the calls' legs: frames concealed (no
                // packet in time), packets that came after their frame was played, received, sent.
                var concealed = 0, late = 0, received = 0, sent = 0
                for call in calls {
                    for s in call.statistics().values {
                        concealed += s.concealed
                        late += s.late
                        received += s.packetsReceived
                        sent += s.packetsSent
                    }
                    call.close()
                }
                calls.removeAll()
                reply("ok concealed=\(concealed) late=\(late) received=\(received) sent=\(sent)")
            case "quit":
                calls.forEach { $0.close() }
                return
            default:
                reply("error unknown command")
            }
        }
        calls.forEach { $0.close() }
    }
}
