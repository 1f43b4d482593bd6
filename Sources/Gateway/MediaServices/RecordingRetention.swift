import Dispatch
import Foundation
import Synchronization

/// Deletes recordings older than `recordings.retentionDays` (by the file's last write), off
/// every event loop: once at start, then hourly. Files of calls still being recorded are
/// written to every second, so they are never old enough to go.
final class RecordingRetention: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "irisgw-recording-retention", qos: .utility)

    init(directory: String, days: Int, interval: Double = 3600) {
        schedule(directory: directory, age: Double(days) * 86_400, interval: interval, after: 0)
    }

    private func schedule(directory: String, age: Double, interval: Double, after delay: Double) {
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, !self.stopped.load(ordering: .relaxed) else { return }
            Self.sweep(directory: directory, olderThan: age)
            self.schedule(directory: directory, age: age, interval: interval, after: interval)
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Deletes the `.wav` and `.ogg` files in `directory` last written more than `age` seconds
    /// before `now`; returns their names.
    @discardableResult
    static func sweep(directory: String, olderThan age: Double, now: Date = Date()) -> [String] {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for name in names where name.hasSuffix(".wav") || name.hasSuffix(".ogg") {
            let path = directory + "/" + name
            guard let modified = (try? fm.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > age
            else { continue }
            if (try? fm.removeItem(atPath: path)) != nil { removed.append(name) }
        }
        return removed
    }
}
