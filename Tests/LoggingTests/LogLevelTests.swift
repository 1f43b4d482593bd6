import Logging
import Synchronization
import Testing

/// Levels per component through a sink that collects its lines: what is off is never built,
/// what is on is written once, in the sink's format.
struct LogLevelTests {
    final class Collector: Sendable {
        let lines = Mutex<[String]>([])
        func sink(_ configuration: LogConfiguration) -> LogSink {
            LogSink(configuration: configuration) { [self] bytes in
                lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) }
            }
        }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func eachComponentPrintsFromItsOwnLevel() {
        let collected = Collector()
        var c = LogConfiguration()
        #expect(throws: Never.self) { try c.apply(levelSpecification: "warning,sip=debug,media=error") }
        let sink = collected.sink(c)
        var built: [String] = []
        func message(_ s: String) -> String {
            built.append(s)
            return s
        }
        let sip = Logger(.sip, sink: sink), media = Logger(.media, sink: sink), calls = Logger(.calls, sink: sink)
        sip.debug(message("sip debug"))
        media.warning(message("media warning"))
        media.error(message("media error"))
        calls.info(message("calls info"))
        calls.warning(message("calls warning"))
        #expect(collected.all == ["irisgw: sip debug\n", "irisgw: media error\n", "irisgw: calls warning\n"])
        #expect(built == ["sip debug", "media error", "calls warning"], "a line that is off is never built")
        #expect(!calls.isEnabled(.notice) && calls.isEnabled(.error) && sip.isEnabled(.debug))

        // A new configuration applies at once, format included; the context comes first.
        sink.configuration = LogConfiguration(format: .json, level: .info)
        calls.with(["roomId": "r1", "traceId": "t1"]).with("callId", nil).info("call started", ["profile": "p"])
        let last = collected.all.last ?? ""
        #expect(
            last.hasSuffix(
                #""component":"calls","msg":"call started","roomId":"r1","traceId":"t1","profile":"p"}"# + "\n"))
    }

    @Test func levelSpecificationsAreReadOrRefusedWhole() {
        var c = LogConfiguration()
        #expect(c.format == .text && c.level == .info && c.levels.isEmpty, "the documented defaults")
        #expect(throws: Never.self) { try c.apply(levelSpecification: "sip=debug, media = warning") }
        #expect(c.level == .info && c.levels == [.sip: .debug, .media: .warning])
        #expect(throws: Never.self) { try c.apply(levelSpecification: "notice,sip=info") }
        #expect(c.level == .notice && c.level(for: .sip) == .info && c.level(for: .calls) == .notice)
        let before = c
        for (bad, says) in [
            ("loud", "unknown log level \"loud\""), ("sip=loud", "unknown log level \"loud\""),
            ("debug,rtp=info", "unknown log component \"rtp\""), ("", "unknown log level \"\""),
            ("info,", "unknown log level \"\""), ("=info", "unknown log component \"\"")
        ] {
            #expect {
                try c.apply(levelSpecification: bad)
            } throws: { error in
                (error as? LogSettingError)?.description.hasPrefix(says) == true
            }
            #expect(c == before, "\(bad) changed nothing")
        }
    }
}
