import Glibc

/// Writes `text` to fd 2 in one write(2), so lines from several threads do not interleave.
/// (Swift 6 refuses the C `stderr` global: it is shared mutable state.)
public func writeToStandardError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
