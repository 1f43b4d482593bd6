import Glibc

/// The data directory holds phone numbers (`calls.sqlite`) and secrets (`api-key`,
/// `room-token-secret`): the directory is 0700 and every file in it 0600, whatever the
/// umask, and whatever an older version left behind.
public enum PrivateFiles {
    /// Creates `path` (and its parents) when missing and makes it 0700. Returns an error
    /// text naming the path when it cannot be created or is not a directory.
    public static func prepareDirectory(_ path: String) throws(PrivateFileError) {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw PrivateFileError(path: path, errno: errno) }
            let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            if !parent.isEmpty, stat(parent, &info) != 0 { try prepareParents(parent) }
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw PrivateFileError(path: path, errno: errno) }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw PrivateFileError(path: path, reason: "not a directory")
        }
        guard chmod(path, 0o700) == 0 else { throw PrivateFileError(path: path, errno: errno) }
    }

    /// Makes an existing file 0600; a missing one is fine.
    public static func restrict(_ path: String) throws(PrivateFileError) {
        guard chmod(path, 0o600) == 0 || errno == ENOENT else { throw PrivateFileError(path: path, errno: errno) }
    }

    /// Creates `path` empty with mode 0600 unless it exists, then makes it (and the SQLite
    /// `-wal` and `-shm` beside it) 0600. SQLite creates its WAL and SHM files with the mode
    /// of the database file, so a database made here keeps them private too.
    public static func prepareDatabase(_ path: String) throws(PrivateFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFileError(path: path, errno: errno) }
        close(fd)
        for file in [path, path + "-wal", path + "-shm"] { try restrict(file) }
    }

    /// Writes `text` to `path` (mode 0600) in place of what it held: a new file beside it,
    /// synced, renamed over it, so a reader sees the old text or the new, never a mix.
    public static func replace(_ path: String, with text: String) throws(PrivateFileError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFileError(path: temporary, errno: errno) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let failed = written != bytes.count || fchmod(fd, 0o600) != 0 || fsync(fd) != 0
        let code = errno
        close(fd)
        guard !failed, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw PrivateFileError(path: path, errno: failed ? code : errno)
        }
    }

    /// Parents of the data directory are made with the usual 0755 (they may be shared).
    private static func prepareParents(_ path: String) throws(PrivateFileError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            guard mkdir(built, 0o755) == 0 || errno == EEXIST else { throw PrivateFileError(path: built, errno: errno) }
        }
    }
}

/// A file or directory of the data directory could not be made private.
public struct PrivateFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    init(path: String, errno code: Int32) {
        self.init(path: path, reason: String(cString: strerror(code)))
    }

    public var description: String { "\(path): \(reason)" }
}
