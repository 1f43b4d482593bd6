import Crypto
import Foundation
import SIP

/// Why the room token secret could not be loaded or created.
public struct RoomTokenSecretError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The secret file.
    public var path: String
    /// What went wrong, e.g. "No such file or directory" for a missing data directory.
    public var reason: String

    /// "room token secret <path>: <reason>".
    public var description: String { "room token secret \(path): \(reason)" }
}

extension RoomTokenSigner {
    /// The secret's file name inside the data directory.
    public static let secretFileName = "room-token-secret"

    /// Loads `<dataDir>/room-token-secret` (32 bytes as 64 hex digits and a newline) or,
    /// at first start, creates it with mode 0600.
    ///
    /// Creation writes a temporary file, fsyncs it and hard-links it into place, so the
    /// secret file is never seen half written, and of two processes starting at once only
    /// one secret wins: the other process loads it. A secret file others can read is
    /// used, with a warning on fd 2.
    ///
    /// - Throws: `RoomTokenSecretError` naming the file: missing directory, unreadable or
    ///   malformed file.
    public static func loadOrCreate(dataDir: String) throws(RoomTokenSecretError) -> RoomTokenSigner {
        let path = (dataDir.hasSuffix("/") ? dataDir : dataDir + "/") + secretFileName
        if let secret = try SecretFile.read(path) { return RoomTokenSigner(secret: secret) }
        let secret = Crypto.randomBytes(count: 32)
        if try SecretFile.create(path, directory: dataDir, secret: secret) { return RoomTokenSigner(secret: secret) }
        // Another process created it between our look and our link: use theirs.
        guard let theirs = try SecretFile.read(path) else {
            throw RoomTokenSecretError(path: path, reason: "the file vanished while being created")
        }
        return RoomTokenSigner(secret: theirs)
    }
}

/// POSIX file handling for the secret: exclusive creation, modes and fsync.
private enum SecretFile {
    static let length = 32

    /// The secret at `path`; nil when there is no such file.
    static func read(_ path: String) throws(RoomTokenSecretError) -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw failure(path)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw RoomTokenSecretError(path: path, reason: "not a regular file")
        }
        // An older version or a hand-made file may be readable by others: narrow it.
        if info.st_mode & 0o077 != 0, chmod(path, 0o600) != 0 {
            Log.gateway.warning(
                "room token secret \(path): readable by others (mode \(String(info.st_mode & 0o777, radix: 8))) and chmod failed; chmod 600 it",
                ["file": "\(path)"])
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw failure(path) }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let secret = hexBytes(text), secret.count == length else {
            throw RoomTokenSecretError(path: path, reason: "expected \(length * 2) hexadecimal digits")
        }
        return secret
    }

    /// Creates `path` holding `secret`; false when the file already exists.
    static func create(_ path: String, directory: String, secret: [UInt8]) throws(RoomTokenSecretError) -> Bool {
        let temporary = path + ".tmp-\(getpid())-" + Crypto.hex(Crypto.randomBytes(count: 4))
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(path) }
        defer { unlink(temporary) }
        let bytes = Array((Crypto.hex(secret) + "\n").utf8)
        // fchmod: the umask may have narrowed 0600 further (0400), which would still work but
        // is not what the file is documented to be.
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let error: RoomTokenSecretError? =
            written < 0
            ? failure(temporary)
            : written < bytes.count
                ? RoomTokenSecretError(path: temporary, reason: "short write (disk full?)")
                : fchmod(fd, 0o600) != 0 || fsync(fd) != 0 ? failure(temporary) : nil
        close(fd)
        if let error { throw error }
        // link, unlike rename, never replaces a file another process has just created.
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { return false }
            throw failure(path)
        }
        syncDirectory(directory)
        return true
    }

    /// Makes the new name itself durable; best effort (a lost name only means a new secret).
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private static func failure(_ path: String) -> RoomTokenSecretError {
        RoomTokenSecretError(path: path, reason: String(cString: strerror(errno)))
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
