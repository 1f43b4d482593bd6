import Glibc

/// Where a recording's bytes go: appended at the end, or patched in place (a WAV header's
/// sizes). Used by the writer thread only.
protocol RecordingSink: AnyObject {
    /// Appends `bytes` at the end.
    func append(_ bytes: UnsafeRawBufferPointer) throws(CallRecordingError)
    /// Overwrites `bytes` at `offset` (inside what was appended).
    func patch(_ bytes: [UInt8], at offset: Int) throws(CallRecordingError)
    /// Closes the file; nothing is written after.
    func close()
}

/// A recording file, created new with mode 0600 whatever the umask (recordings hold what
/// callers said). Made with `open(2)` here rather than through the gateway's private-file
/// helper: Media does not depend on Gateway.
final class RecordingFile: RecordingSink {
    let path: String
    private var fd: Int32

    /// Creates `path`; an existing file is an error (a recording never overwrites another).
    init(path: String) throws(CallRecordingError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure(path) }
        // The umask can only take bits away, but a file system may add them: say it once more.
        guard fchmod(fd, 0o600) == 0 else {
            let error = Self.failure(path)
            Glibc.close(fd)
            throw error
        }
    }

    deinit { close() }

    func append(_ bytes: UnsafeRawBufferPointer) throws(CallRecordingError) {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw Self.failure(path) }
            done += n
        }
    }

    func patch(_ bytes: [UInt8], at offset: Int) throws(CallRecordingError) {
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == bytes.count else { throw Self.failure(path) }
    }

    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    private static func failure(_ path: String) -> CallRecordingError {
        .io(path: path, reason: String(cString: strerror(errno)))
    }
}
