import ControlAPI
import Foundation
import Gateway
import IrisAPI
import Logging
import Synchronization

/// Reloads `irisgw serve`'s configuration (SIGHUP, `POST /v1/admin/reload`;
/// docs/operations.md, "Reloading"): the command line read again (its `--config` file, the
/// flags over it) and the profiles directory, on the caller's thread (never an event loop),
/// then what may change live put in force. One reload at a time.
final class ServeReloader: Sendable {
    private let arguments: [String]
    /// The directory named at start: a new `profiles` key takes a restart.
    private let profilesDirectory: String
    /// The settings file as read at start. A key that differs from it and cannot change live
    /// is reported on every reload until a restart.
    private let startFile: ServeConfiguration
    private let gateway: Gateway
    private let apis: [ControlAPIServer]
    /// SIGTERM's grace for calls (`drainTimeoutSec`, `--drain-timeout`): live.
    let drainTimeout: Mutex<Double>
    private let running = NSLock()

    init(arguments: [String], options: ServeOptions, gateway: Gateway, apis: [ControlAPIServer]) {
        self.arguments = arguments
        profilesDirectory = options.profilesDirectory
        startFile = options.file
        self.gateway = gateway
        self.apis = apis
        drainTimeout = Mutex(options.drainTimeout)
    }

    /// One reload, all or nothing. `waiting`: waits for a reload under way (SIGHUP); else
    /// refuses at once (`.busy`, the API's 409).
    func reload(waiting: Bool) throws(ReloadRefusal) -> ReloadSummary {
        if waiting {
            running.lock()
        } else if !running.try() {
            throw ReloadRefusal(kind: .busy, message: "another reload is under way")
        }
        defer { running.unlock() }
        let options: ServeOptions
        do {
            options = try ServeOptions.parse(arguments)
        } catch {
            throw error.problem.map(ReloadRefusal.init) ?? ReloadRefusal(kind: .invalid, message: error.message)
        }
        let changes: ProfileChanges
        do {
            let profiles = try ProfileLoader.loadDirectory(URL(fileURLWithPath: profilesDirectory))
            changes = try gateway.reload(profiles: profiles, configuration: options.gateway)
        } catch {
            throw ReloadRefusal(error)
        }
        let pageLimits = options.file.pageTokens ?? PageTokenLimits()
        for api in apis { api.updatePageLimits(pageLimits) }
        drainTimeout.withLock { $0 = options.drainTimeout }
        LogSink.standardError.configuration = options.log
        return ReloadSummary(
            reloaded: changes.reloaded, unchanged: changes.unchanged, removed: changes.removed,
            restartRequired: options.file.restartRequired(since: startFile))
    }

    static let log = Logger(.gateway)

    /// A reload and its log line: the summary as the API answers it (JSON), or why nothing
    /// changed. `by` says who asked (SIGHUP, the API).
    func reloadAndLog(by: String, waiting: Bool) throws(ReloadRefusal) -> ReloadSummary {
        do {
            let summary = try reload(waiting: waiting)
            Self.log.notice("reload (\(by)): \(Self.json(summary))", ["by": "\(by)"])
            return summary
        } catch {
            Self.log.error(
                "reload (\(by)) refused, the configuration in force stays: \(error)",
                ["by": "\(by)", "file": "\(error.file)", "key": "\(error.key)"])
            throw error
        }
    }

    static func json(_ summary: ReloadSummary) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(summary)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
