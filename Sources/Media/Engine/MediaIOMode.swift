import IOCore
import Synchronization

/// How the media threads read and write their calls' sockets (docs/media.md, "Batched I/O").
public enum MediaIOMode: String, Sendable, CaseIterable {
    /// io_uring when the kernel allows it, else epoll (the reason logged once per process).
    case automatic
    /// io_uring, or the engine does not start.
    case uring
    /// An epoll wake-up, a `recvmsg` and a `sendto` per packet (the fallback).
    case epoll
}

/// The engine could not set up the io_uring `MediaIOMode.uring` asked for.
public struct MediaIOUnavailableError: Error, CustomStringConvertible {
    /// Why (the failing call and errno).
    public let reason: String
    public var description: String { "media I/O: io_uring unavailable: \(reason)" }
}

/// Set once the fallback to epoll has been logged (it is said once per process).
let mediaIOFallbackLogged = Atomic<Bool>(false)
