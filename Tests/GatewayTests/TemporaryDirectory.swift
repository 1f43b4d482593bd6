import Foundation

/// Runs `body` with a fresh directory under the system temp directory and removes the
/// directory afterwards, whatever `body` does.
func withTemporaryDirectory<T>(_ prefix: String, _ body: (String) throws -> T) throws -> T {
    let path = try makeTemporaryDirectory(prefix)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// `withTemporaryDirectory` for a body that waits (suspending, not blocking a thread).
func withTemporaryDirectory<T>(_ prefix: String, waiting body: (String) async throws -> T) async throws -> T {
    let path = try makeTemporaryDirectory(prefix)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

private func makeTemporaryDirectory(_ prefix: String) throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("irisgw-\(prefix)-\(UUID().uuidString)", isDirectory: true).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
