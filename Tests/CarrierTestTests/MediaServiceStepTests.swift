import Foundation
import IrisAPI
import Media
import MediaStreams
import Testing

@testable import CarrierTest

/// The media-service options and steps of a suite (`amd`, `recording`, `silent`; `expectAMD`,
/// `stream`, `expectRecording`): what a suite file may say, and the runner's judgement of
/// canned events, messages and recordings.
@Suite struct MediaServiceStepTests {
    static func suite(_ step: String, test: String = "amd: \"detectBeep\"") -> String {
        "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", \(test), steps: [ \(step) ] } ] }"
    }

    static func step(_ text: String) throws -> TestStep {
        try TestSuite.parse(suite(text), file: "suite.json5").tests[0].steps[0]
    }

    @Test(arguments: [
        ("{ expectAMD: \"machine\" }", TestStep.expectAMD(AMDStep(result: .machine))),
        ("{ expectAMD: \"human\", withinSec: 6 }", .expectAMD(AMDStep(result: .human, within: 6))),
        ("{ expectAMD: \"machine\", beep: true }", .expectAMD(AMDStep(result: .machine, beep: true))),
        ("{ expectAMD: \"fax\", beep: false }", .expectAMD(AMDStep(result: .fax))),
        ("{ stream: {} }", .stream(StreamStep())),
        (
            "{ stream: { track: \"both\", minAudioSec: 2, toneHz: 1000, withinSec: 8 } }",
            .stream(StreamStep(track: .both, minAudioSec: 2, toneHz: 1000, within: 8))
        ),
        ("{ stream: { track: \"outbound\" }, withinSec: 4 }", .stream(StreamStep(track: .outbound, within: 4))),
        ("{ expectRecording: {} }", .expectRecording(RecordingStep())),
        (
            "{ expectRecording: { channels: 2, minDurationSec: 3, format: \"ogg\" }, withinSec: 5 }",
            .expectRecording(RecordingStep(channels: 2, minDurationSec: 3, format: "ogg", within: 5))
        )
    ])
    func goodStepsParse(_ text: String, _ expected: TestStep) throws {
        #expect(try Self.step(text) == expected)
    }

    @Test func testOptionsParse() throws {
        let text = """
            { name: "s", tests: [ { name: "t", target: "1", amd: "detect", recording: { channels: 1, format: "ogg" },
                                    silent: true, steps: [ { hangup: true } ] },
                                  { name: "u", target: "2", steps: [ { hangup: true } ] } ] }
            """
        let tests = try TestSuite.parse(text, file: "suite.json5").tests
        #expect(tests[0].amd == AMDOptions(mode: "detect"))
        #expect(tests[0].recording == RecordingOptions(channels: 1, format: "ogg"))
        #expect(tests[0].silent)
        #expect(tests[1].amd == nil && tests[1].recording == nil && !tests[1].silent)
    }

    @Test func stepsDescribeThemselves() {
        #expect(
            TestStep.expectAMD(AMDStep(result: .machine, beep: true)).description == "expect AMD machine and a beep")
        #expect(
            TestStep.stream(StreamStep(track: .both, toneHz: 1000)).description
                == "stream both to the suite's WebSocket with the 1000 Hz tone")
        #expect(
            TestStep.expectRecording(RecordingStep(channels: 2, minDurationSec: 3)).description
                == "expect a recording of 2 channels at least 3.0 s long")
    }

    @Test(arguments: [
        (
            "{ expectAMD: \"robot\" }", "amd: \"detect\"", "tests[0].steps[0].expectAMD",
            "must be one of human, machine, fax, unknown"
        ),
        ("{ expectAMD: 1 }", "amd: \"detect\"", "tests[0].steps[0].expectAMD", "must be a string"),
        ("{ expectAMD: \"human\", beep: 1 }", "amd: \"detectBeep\"", "tests[0].steps[0].beep", "must be true or false"),
        (
            "{ expectAMD: \"human\" }", "source: \"2\"", "tests[0].steps[0].expectAMD",
            "the test asks for no detection"
        ),
        (
            "{ expectAMD: \"machine\", beep: true }", "amd: \"detect\"", "tests[0].steps[0].beep",
            "a beep is only looked for with the test's amd: \"detectBeep\""
        ),
        ("{ hangup: true, beep: true }", "amd: \"detect\"", "tests[0].steps[0].beep", "unknown key"),
        ("{ hangup: true }", "amd: \"guess\"", "tests[0].amd", "must be detect or detectBeep"),
        ("{ hangup: true }", "amd: { mode: \"detect\" }", "tests[0].amd", "must be a string"),
        ("{ hangup: true }", "recording: 2", "tests[0].recording", "must be an object"),
        ("{ hangup: true }", "recording: { channels: 3 }", "tests[0].recording.channels", "must be a number from 1.0"),
        ("{ hangup: true }", "recording: { channels: 1.5 }", "tests[0].recording.channels", "must be 1 or 2"),
        ("{ hangup: true }", "recording: { format: \"mp3\" }", "tests[0].recording.format", "must be wav or ogg"),
        ("{ hangup: true }", "recording: { rate: 8000 }", "tests[0].recording.rate", "unknown key"),
        ("{ hangup: true }", "silent: \"yes\"", "tests[0].silent", "must be true or false"),
        ("{ stream: true }", "silent: true", "tests[0].steps[0].stream", "must be an object"),
        (
            "{ stream: { track: \"mixed\" } }", "silent: true", "tests[0].steps[0].stream.track",
            "must be inbound, outbound or both"
        ),
        (
            "{ stream: { minAudioSec: 5, withinSec: 5 } }", "silent: true", "tests[0].steps[0].stream.minAudioSec",
            "must be less than withinSec (5.0 s)"
        ),
        (
            "{ stream: { toneHz: 50 } }", "silent: true", "tests[0].steps[0].stream.toneHz",
            "must be a number from 100.0"
        ),
        ("{ stream: { url: \"ws://x\" } }", "silent: true", "tests[0].steps[0].stream.url", "unknown key"),
        ("{ expectRecording: 2 }", "silent: true", "tests[0].steps[0].expectRecording", "must be an object"),
        (
            "{ expectRecording: { channels: 0 } }", "silent: true", "tests[0].steps[0].expectRecording.channels",
            "must be a number from 1.0 to 2.0"
        ),
        (
            "{ expectRecording: { minDurationSec: -1 } }", "silent: true",
            "tests[0].steps[0].expectRecording.minDurationSec", "must be a number from 0.0"
        ),
        (
            "{ expectRecording: { format: \"flac\" } }", "silent: true", "tests[0].steps[0].expectRecording.format",
            "must be wav or ogg"
        )
    ])
    func badInputNamesFileAndKey(_ step: String, _ test: String, _ key: String, _ message: String) {
        do {
            _ = try TestSuite.parse(Self.suite(step, test: test), file: "suite.json5")
            Issue.record("accepted \(test), \(step)")
        } catch {
            #expect(error.file == "suite.json5" && error.keyPath == key, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.description.hasPrefix("suite.json5: \(key): "), "\(error)")
        }
    }

    // MARK: AMD on canned events

    static func amd(_ result: String, _ cause: String = "initialSilence", ms: Int = 2500) -> SessionEvent {
        var e = SessionEvent(event: .onSessionAMD, roomId: "r", traceId: "t")
        e.amd = AMDInfo(result: result, ms: ms, cause: cause)
        return e
    }

    static func beep(_ result: String, ms: Int = 4100) -> SessionEvent {
        var e = SessionEvent(event: .onSessionBeep, roomId: "r", traceId: "t")
        e.beep = BeepInfo(result: result, ms: ms)
        return e
    }

    @Test func amdVerdicts() {
        let machine = AMDStep(result: .machine), beep = AMDStep(result: .machine, beep: true)
        let ended = TransferStepTests.ended(.completed)
        #expect(
            SuiteRunner.amdVerdict(machine, in: [TransferStepTests.connected()])
                == .pending("no verdict (onSessionAMD) came"))
        #expect(SuiteRunner.amdVerdict(machine, in: [TransferStepTests.connected(), Self.amd("machine")]) == .passed)
        #expect(
            SuiteRunner.amdVerdict(AMDStep(result: .human), in: [Self.amd("machine")])
                == .failed("got machine (initialSilence, after 2500 ms)"))
        #expect(
            SuiteRunner.amdVerdict(machine, in: [TransferStepTests.connected(), ended])
                == .failed("the call ended completed before a verdict"))
        #expect(
            SuiteRunner.amdVerdict(beep, in: [Self.amd("machine", "longGreeting", ms: 1500)])
                == .pending("got machine (longGreeting, after 1500 ms) but no onSessionBeep"))
        #expect(SuiteRunner.amdVerdict(beep, in: [Self.amd("machine"), Self.beep("beep")]) == .passed)
        #expect(
            SuiteRunner.amdVerdict(beep, in: [Self.amd("machine"), Self.beep("noBeep", ms: 22_500)])
                == .failed("got machine (initialSilence, after 2500 ms), then noBeep after 22500 ms"))
        #expect(
            SuiteRunner.amdVerdict(beep, in: [Self.amd("machine"), ended])
                == .failed("got machine (initialSilence, after 2500 ms), then the call ended completed before a beep"))
    }

    // MARK: the recording as read

    @Test(arguments: [
        (CallRecordingConfiguration.Format.wav, CallRecordingConfiguration.Layout.stereo),
        (.wav, .mixed), (.ogg, .stereo), (.ogg, .mixed)
    ])
    func recordingsAreReadFromTheirFiles(
        format: CallRecordingConfiguration.Format, layout: CallRecordingConfiguration.Layout
    ) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("call.\(format.rawValue)").path
        let writer = try CallRecordingWriter(path: path, configuration: .init(format: format, layout: layout))
        let tone = (0..<160).map { Int16(8000 * sin(2 * Double.pi * 1000 * Double($0) / 8000)) }
        for _ in 0..<150 { writer.append(trunk: tone, app: tone) }  // 3 s
        _ = try await writer.finish()
        let file = try RecordingFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let channels = layout == .stereo ? 2 : 1
        #expect(file.format == format.rawValue && file.channels == channels, "\(file)")
        #expect(abs(file.durationSec - 3) < 0.001, "\(file)")
        #expect(file.mismatch(RecordingStep(channels: channels, minDurationSec: 2.9, format: format.rawValue)) == nil)
        #expect(
            file.mismatch(RecordingStep(channels: 3 - channels, minDurationSec: 5))
                == "expected \(3 - channels) channel\(channels == 2 ? "" : "s"), at least 5.0 s; got \(file.summary)")
    }

    @Test func unreadableRecordingsSaySo() {
        #expect(throws: RecordingFile.Unreadable(description: "neither WAV nor Ogg (5 bytes)")) {
            try RecordingFile(bytes: Array("hello".utf8))
        }
        let notOpus = Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20) + [1, 4] + Array("Vorb".utf8)
        #expect(throws: RecordingFile.Unreadable(description: "an Ogg file whose first packet is not an OpusHead")) {
            try RecordingFile(bytes: notOpus)
        }
        #expect(throws: RecordingFile.Unreadable.self) { try RecordingFile(bytes: Array("RIFF\0\0\0\0WAVE".utf8)) }
    }
}
