import Foundation

/// Runs `body` with a fresh directory under the system temp directory and removes the
/// directory afterwards, whatever `body` does.
func withTemporaryDirectory<T>(_ prefix: String, _ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("irisgw-\(prefix)-\(UUID().uuidString)", isDirectory: true).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}
