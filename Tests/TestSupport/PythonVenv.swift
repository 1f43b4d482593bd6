import Foundation

/// The venv `make deps` makes at `.build/pyenv` for the Python peers of the tests (pjsua2,
/// websockets), and how those peers talk: one JSON object a line, `{"event": ...}` first.
public enum PythonVenv {
    /// The package's root (this file is Tests/TestSupport/PythonVenv.swift).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// The venv's interpreter.
    public static let python = packageRoot.appendingPathComponent(".build/pyenv/bin/python3").path

    /// True when the interpreter is there and `package` is installed in the venv.
    public static func has(_ package: String) -> Bool {
        let lib = packageRoot.appendingPathComponent(".build/pyenv/lib")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        return FileManager.default.isExecutableFile(atPath: python)
            && versions.contains {
                FileManager.default.fileExists(
                    atPath: lib.appendingPathComponent("\($0)/site-packages/\(package)").path)
            }
    }

    /// The lines of `text` that are event objects, decoded (others are skipped).
    public static func events<Event: Decodable>(_ type: Event.Type, in text: String) -> [Event] {
        let decoder = JSONDecoder()
        return text.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.hasPrefix("{\"event\"") else { return nil }
            return try? decoder.decode(Event.self, from: Data(line.utf8))
        }
    }
}
