import Foundation
import Media
import Synchronization

/// What to say, and how: an espeak-ng voice (`en-us`, `de`, `fr-fr` ...), its speed in
/// words per minute and the text.
public struct Phrase: Hashable, Sendable {
    public var voice: String
    public var text: String
    public var speed: Int

    /// A phrase; espeak-ng's own default speed is 175 words per minute.
    public init(voice: String, text: String, speed: Int = 165) {
        self.voice = voice
        self.text = text
        self.speed = speed
    }
}

/// Why speech could not be made. Each names espeak-ng, so a machine without it says what
/// to install.
public enum SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No executable at the path (Debian: `apt-get install espeak-ng`).
    case synthesizerMissing(path: String)
    /// espeak-ng ran and failed (an unknown voice, say), with its exit status and output.
    case synthesizerFailed(status: Int32, output: String)
    /// espeak-ng's WAV could not be read or the process could not be started.
    case unreadableOutput(String)

    public var description: String {
        switch self {
        case .synthesizerMissing(let path):
            "espeak-ng not found at \(path) (Debian package espeak-ng; `make deps` installs it)"
        case .synthesizerFailed(let status, let output): "espeak-ng failed (exit \(status)): \(output)"
        case .unreadableOutput(let why): "espeak-ng's output: \(why)"
        }
    }
}

/// Speech from Debian's `espeak-ng`: each phrase spoken once per synthesizer (through a
/// temporary WAV that is removed once read) and kept, trimmed of espeak's padding, at its
/// own 22050 Hz; `speech(_:sampleRate:peak:)` resamples and scales a copy.
///
/// Every call that is not cached runs a process and waits for it: call it off any event
/// loop and off Swift's cooperative pool (a thread of its own, or at start-up). Sendable:
/// the cache is behind a lock, and two threads asking for the same new phrase at once may
/// both run espeak-ng (harmless).
public final class SpeechSynthesizer: Sendable {
    /// Where Debian installs espeak-ng.
    public static let defaultExecutable = "/usr/bin/espeak-ng"
    /// The rate espeak-ng writes, Hz.
    public static let nativeRate = 22_050
    /// Samples this quiet or quieter at either end are espeak's padding.
    static let paddingLevel = 200

    /// One synthesizer per process at the default path, so phrases are made once.
    public static let shared = SpeechSynthesizer()

    /// The espeak-ng executable.
    public let executable: String
    private let cache = Mutex<[Phrase: [Int16]]>([:])

    /// A synthesizer running `executable`.
    public init(executable: String = SpeechSynthesizer.defaultExecutable) {
        self.executable = executable
    }

    /// Whether the executable is there to run.
    public var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    /// `phrase` at espeak-ng's 22050 Hz, without its leading and trailing silence. Blocks
    /// while espeak-ng runs (the first time for each phrase).
    public func speech(_ phrase: Phrase) throws(SpeechError) -> [Int16] {
        if let kept = cache.withLock({ $0[phrase] }) { return kept }
        let spoken = Self.trimmed(try run(phrase))
        cache.withLock { $0[phrase] = spoken }
        return spoken
    }

    /// `phrase` at `sampleRate`, scaled so its loudest sample is at `peak` dBFS.
    public func speech(_ phrase: Phrase, sampleRate: Int, peak: Double) throws(SpeechError) -> [Double] {
        let resampled = Resampler.resample(
            try speech(phrase).map(Double.init), from: Double(Self.nativeRate), to: Double(sampleRate))
        let top = resampled.reduce(0) { max($0, abs($1)) }
        guard top > 0 else { return resampled }
        let gain = 32_767 * pow(10, peak / 20) / top
        return resampled.map { $0 * gain }
    }

    private func run(_ phrase: Phrase) throws(SpeechError) -> [Int16] {
        guard isAvailable else { throw .synthesizerMissing(path: executable) }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("irisgw-speech-\(UUID().uuidString.prefix(8)).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-v", phrase.voice, "-s", "\(phrase.speed)", "-w", path, phrase.text]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .unreadableOutput("cannot start \(executable): \(error)")
        }
        // espeak-ng says little (an unknown voice's complaint): reading to the end cannot
        // fill the pipe, and ends when it exits.
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw .synthesizerFailed(status: process.terminationStatus, output: said)
        }
        do {
            let wav = try WAVFile(contentsOf: path)
            guard wav.sampleRate == Self.nativeRate else {
                throw SpeechError.unreadableOutput("\(wav.sampleRate) Hz, expected \(Self.nativeRate)")
            }
            return wav.samples
        } catch let error as SpeechError {
            throw error
        } catch {
            throw .unreadableOutput("\(error)")
        }
    }

    /// espeak pads its output with silence; callers set their own lead and tail.
    static func trimmed(_ samples: [Int16]) -> [Int16] {
        guard let first = samples.firstIndex(where: { abs(Int($0)) > paddingLevel }),
            let last = samples.lastIndex(where: { abs(Int($0)) > paddingLevel })
        else { return [] }
        return Array(samples[first...last])
    }
}
