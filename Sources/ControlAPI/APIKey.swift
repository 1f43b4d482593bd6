import Crypto
import Foundation
import Gateway
import SIP

/// The bearer key every request needs. `IRISGW_API_KEY` wins; otherwise
/// `<data-dir>/api-key` is read, or created at first start (mode 0600) so the CLI on the
/// same machine finds it by itself.
public enum APIKey {
    public static func loadOrCreate(
        dataDir: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        if let k = environment["IRISGW_API_KEY"], !k.isEmpty { return k }
        let path = dataDir + "/api-key"
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let key = text.trimmingCharacters(in: .whitespacesAndNewlines)
            try PrivateFiles.restrict(path)
            if !key.isEmpty { return key }
        }
        try PrivateFiles.prepareDirectory(dataDir)
        let key = Crypto.hex(Crypto.randomBytes(count: 24))
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return key
    }

    /// Constant-time check of an `Authorization: Bearer <key>` header.
    static func matches(header: String?, key: String) -> Bool {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return false }
        let given = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return Crypto.constantTimeEqual(Array(given.utf8), Array(key.utf8))
    }
}
