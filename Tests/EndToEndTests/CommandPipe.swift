import Foundation
import Glibc
import SIP

/// A child's stdin as a pipe the test writes command lines into (baresip's `stdio` UI, the
/// pjsua2 peer). We keep the read end open too, so a write after the child exited is not a
/// SIGPIPE for the test process. `close()` once the child has exited.
final class CommandPipe: Sendable {
    private let writeFD: Int32
    private let readFD: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError("pipe") }
        readFD = fds[0]
        writeFD = fds[1]
        // Not inherited by other children; the child gets its stdin by dup2, which clears it.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }

    /// What the child reads as its stdin (`ChildProcess(standardInput:)`).
    var standardInput: FileHandle { FileHandle(fileDescriptor: readFD, closeOnDealloc: false) }

    /// Writes `line` and a newline.
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(writeFD, $0.baseAddress, $0.count) }
    }

    func close() {
        Glibc.close(writeFD)
        Glibc.close(readFD)
    }

    /// What to do once the child has exited: close this pipe and remove the child's folder
    /// (kept when the environment sets IRISGW_E2E_KEEP).
    func cleanUp(removing directory: URL) -> @Sendable () -> Void {
        { [self] in
            close()
            if ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
                try? FileManager.default.removeItem(at: directory)
            }
        }
    }
}
