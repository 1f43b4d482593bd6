import Foundation
import IrisAPI
import IrisClient

/// `irisgw call`: places one call through a running gateway and prints its events.
/// Exit status: 0 when the call connected and ended normally (`completed`, or `transferred`
/// away), 1 when it ended otherwise, 2 for a usage error, 3 when the gateway refused or could
/// not be reached.
enum CallCommand {
    static let usage = """
        usage: irisgw call TARGET --from SOURCE [--profile NAME] [--api URL] [--ca-file FILE] [--data-dir DIR]
                           [--caller-name NAME] [--privacy VALUES] [--header 'NAME: VALUE']...
                           [--opus-complexity N] [--opus-bitrate BPS|auto]
                           [--tone HZ | --play WAV] [--record WAV] [--dtmf DIGITS]
                           [--hold-after S] [--unhold-after S] [--hangup-after S]
                           [--transfer-to TN [--transfer-after S]] [--amd detect|detectBeep]
                           [--recording wav|ogg] [--agent ws(s)://URL] [--json]

          --caller-name NAME   the From display name
          --privacy VALUES     RFC 3323 privacy: none, id, header, user, session, critical,
                               joined with ; (id;critical)
          --header 'N: V'      an extra INVITE header (X- names, or names the profile allows);
                               repeat for more
          --opus-complexity N  the gateway's Opus encoder toward this client for this call:
                               0-10 (CPU against quality; default the profile's media.opus)
          --opus-bitrate BPS   its bitrate, 6000-510000 bits per second, or auto
          --transfer-to TN     blind transfer: once connected, hand the call on to TN (the
                               gateway's transfer); exits 0 when the call ends transferred
          --transfer-after S   when to ask, in seconds after the call connects (default 0: at once)
          --amd MODE           answering-machine detection once answered: detect (human, machine,
                               fax or unknown) or detectBeep (and the machine's beep)
          --recording FORMAT   the gateway records the call (two channels, wav or ogg); GET
                               /v1/sessions/{roomId}/recording serves it
          --agent URL          a voice agent's WebSocket (Twilio Media Streams) is the call's
                               audio instead of this client's
          --api URL            the gateway's control API, http:// or https:// (default http://127.0.0.1:8080)
          --ca-file FILE       for an https --api: the CAs to trust (PEM; default $IRISGW_CA_FILE,
                               else the system store); the certificate must name the URL's host

        Times are seconds after the call connects. Without --hangup-after the call lasts until
        the far end hangs up or Ctrl-C (also after a transfer that failed).

        """

    static func run(_ args: [String]) -> Int32 {
        var options = ClientOptions()
        var target: String?, source: String?, profile: String?, dtmf: String?
        var caller = CallerOptions()
        var transfer = TransferOption()
        var services = ServiceOptions()
        var reader = ArgumentReader(args)
        do {
            while let option = reader.next() {
                if try options.parse(option, &reader) { continue }
                switch option {
                case "--from": source = try reader.value()
                case "--profile": profile = try reader.value()
                case "--dtmf": dtmf = try reader.value()
                case "--caller-name": caller.name = try reader.value()
                case "--privacy": caller.privacy = try reader.value()
                case "--header": try caller.addHeader(try reader.value())
                case "--opus-complexity": try caller.setOpusComplexity(try reader.value())
                case "--opus-bitrate": try caller.setOpusBitrate(try reader.value())
                case "--transfer-to": transfer.target = try reader.value()
                case "--transfer-after": transfer.afterSeconds = try reader.seconds()
                case "--amd": try services.setAMD(try reader.value())
                case "--recording": try services.setRecording(try reader.value())
                case "--agent": services.agent = MediaWebSocket(url: try reader.value())
                case "-h", "--help":
                    writeOut(usage)
                    return 0
                case let a where a.hasPrefix("-") && a.count > 1 && !a.dropFirst().allSatisfy(\.isNumber):
                    throw UsageError("unknown option \(a)")
                case let a:
                    guard target == nil else { throw UsageError("one TARGET only") }
                    target = a
                }
            }
            guard let target else { throw UsageError("TARGET is required") }
            guard let source else { throw UsageError("--from SOURCE is required") }
            try transfer.check()
            return try place(
                target: target, source: source, profile: profile, dtmf: dtmf, caller: caller, transfer: transfer,
                services: services, options: options)
        } catch let e as UsageError {
            writeError("irisgw call: \(e)\n\n" + usage)
            return 2
        } catch {
            writeError("irisgw call: \(error)\n")
            return 3
        }
    }

    static func place(
        target: String, source: String, profile: String?, dtmf: String?, caller: CallerOptions,
        transfer: TransferOption, services: ServiceOptions, options: ClientOptions
    ) throws -> Int32 {
        let printer = EventPrinter(json: options.json)
        let session = IrisRtcAudioSession(
            connection: try options.connection(), stream: try options.stream(), delegate: printer)
        printer.onConnected = {
            if let dtmf { after(0.5) { try? session.insertDTMFtone(dtmf) } }
            options.scheduleInCall(session, printer)
            transfer.schedule(session, printer)
        }
        try session.createWithTN(
            targetTN: target, sourceTN: source, profile: profile, callerName: caller.name,
            privacy: caller.privacy, headers: caller.headers.isEmpty ? nil : caller.headers, opus: caller.opus,
            recording: services.recording, amd: services.amd, agent: services.agent)
        // Ctrl-C closes the call; the end still comes from the gateway.
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        signal(SIGINT, SIG_IGN)
        interrupt.setEventHandler { try? session.close() }
        interrupt.resume()
        while !session.waitForEnd(timeout: 3600) {}
        interrupt.cancel()
        if let path = options.recordWAV { try session.stream.record(to: path) }
        session.stop()
        let reason = session.endedEvent?.reason
        return printer.connected && (reason == .completed || reason == .transferred) ? 0 : 1
    }
}

/// `--amd`, `--recording` and `--agent` of `irisgw call`: the gateway's media services.
struct ServiceOptions {
    var amd: AMDOptions?
    var recording: RecordingOptions?
    var agent: MediaWebSocket?

    mutating func setAMD(_ mode: String) throws {
        guard mode == "detect" || mode == "detectBeep" else { throw UsageError("--amd is detect or detectBeep") }
        amd = AMDOptions(mode: mode)
    }

    mutating func setRecording(_ format: String) throws {
        guard format == "wav" || format == "ogg" else { throw UsageError("--recording is wav or ogg") }
        recording = RecordingOptions(channels: 2, format: format)
    }
}

/// `--transfer-to` and `--transfer-after` of `irisgw call`: a blind transfer at a time
/// after the answer. The gateway checks the number (the trunk's dial policy).
struct TransferOption {
    var target: String?
    /// Seconds after Connected; nil: not given (at once).
    var afterSeconds: Double?

    func check() throws {
        if target?.isEmpty == true { throw UsageError("--transfer-to needs a number") }
        if afterSeconds != nil && target == nil { throw UsageError("--transfer-after needs --transfer-to") }
    }

    /// Once connected: the transfer at its time; a refusal is printed and the call goes on.
    func schedule(_ session: IrisRtcAudioSession, _ printer: EventPrinter) {
        guard let target else { return }
        after(afterSeconds ?? 0) {
            do { try session.transfer(to: target) } catch { printer.line("transfer: \(error)") }
        }
    }
}

/// `--caller-name`, `--privacy`, `--header` and `--opus-*` of `irisgw call`. The gateway
/// checks them (docs/api.md); here a header only has to be `NAME: VALUE`, given once, and
/// an Opus setting a number (or `auto`).
struct CallerOptions {
    var name: String?
    var privacy: String?
    var headers: [String: String] = [:]
    /// The request's `opus`; nil when no `--opus-*` option is given.
    var opus: OpusOptions?

    mutating func setOpusComplexity(_ text: String) throws {
        guard let n = Int(text) else { throw UsageError("--opus-complexity needs a number 0-10, found \"\(text)\"") }
        opus = opus ?? OpusOptions()
        opus?.complexity = n
    }

    mutating func setOpusBitrate(_ text: String) throws {
        let bitrate: OpusOptions.Bitrate
        if text == "auto" {
            bitrate = .auto
        } else if let n = Int(text) {
            bitrate = .bitsPerSecond(n)
        } else {
            throw UsageError("--opus-bitrate needs bits per second (6000-510000) or auto, found \"\(text)\"")
        }
        opus = opus ?? OpusOptions()
        opus?.bitrate = bitrate
    }

    mutating func addHeader(_ text: String) throws {
        guard let colon = text.firstIndex(of: ":") else {
            throw UsageError("--header needs 'NAME: VALUE', found \"\(text)\"")
        }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw UsageError("--header needs a name before the colon") }
        guard headers[name] == nil else { throw UsageError("--header \(name) is given twice") }
        headers[name] = value
    }
}
