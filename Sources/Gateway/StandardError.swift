import Foundation

/// Writes `message` and a newline to fd 2 in one write(2), so lines from several threads
/// do not interleave. (Swift 6 refuses the C `stderr` global: it is shared mutable state.)
func writeToStandardError(_ message: String) {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
