import Foundation
import Glibc
import IOCore

/// The scheduler's autogroup of this session (`/proc/self/autogroup`): with autogroups on,
/// `nice` only weighs processes of one session against each other, and a build in another
/// session shares a CPU half and half with the engine under test. The comparison raises its
/// session's autogroup to nice -10 while it runs (root only; restored after), for both engines alike.
enum SessionPriority {
    static func current() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/autogroup", encoding: .utf8),
            let value = text.split(separator: " ").last
        else { return nil }
        return Int(value.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @discardableResult
    static func set(_ nice: Int) -> Bool {
        guard let fh = FileHandle(forWritingAtPath: "/proc/self/autogroup") else { return false }
        defer { try? fh.close() }
        return (try? fh.write(contentsOf: Data("\(nice)".utf8))) != nil
    }

    /// Runs `body` with the session at nice -10, then puts it back.
    static func raised<T>(_ body: () throws -> T) rethrows -> T {
        let before = current()
        if before != nil { set(-10) }
        defer { if let before { set(before) } }
        return try body()
    }
}

/// Where the generator sends one call: the engine's trunk port, platform port, and the payload
/// type the platform leg expects.
struct CallTarget {
    var trunk: Int
    var platform: Int
    var payloadType: UInt8
}

/// A media server under test: its own process, pinned to CPU 0.
protocol MediaServerUnderTest: AnyObject {
    var name: String { get }
    /// The process whose CPU time (all threads) is measured.
    var pid: Int32 { get }
    /// Opens one call per generator (trunk, platform) port pair.
    func open(_ mode: LoadMode, generator: [(Int, Int)]) throws -> [CallTarget]
    /// Closes the calls; returns what the engine counted for them when it says ("key=value ...", or "").
    @discardableResult
    func closeAll() throws -> String
    func stop()
}
