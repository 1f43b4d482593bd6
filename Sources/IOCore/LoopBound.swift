/// A value that lives on one `EventLoop`: `LoopBound` is `Sendable` whatever the value is,
/// so it can be captured by a closure that crosses threads, but reading or writing `value`
/// is only allowed on that loop's thread. Debug builds check it on every access
/// (`EventLoop.assertInLoop`); release builds compile the check out and pay nothing.
///
/// Modelled on swift-nio's `NIOLoopBound`. While the loop's thread does not run (before
/// `start`, after `stop`) the thread at hand owns its state (`EventLoop.isConfinedHere`), so
/// state can be set up and then handed to the loop. `value` is inlinable: specialized and
/// inlined where it is used, a read of one field of a large state loads that field alone.
// the one justified: `value` is reached only on `loop`, checked in debug
public struct LoopBound<Value>: @unchecked Sendable {
    /// The loop `value` belongs to.
    public let loop: EventLoop
    @usableFromInline var stored: Value

    /// Binds `value` to `loop`; call it on that loop (or while the loop does not run).
    public init(_ value: Value, loop: EventLoop) {
        loop.assertInLoop()
        self.loop = loop
        self.stored = value
    }

    /// The value; on `loop` only.
    @inlinable
    public var value: Value {
        get {
            loop.assertInLoop()
            return stored
        }
        set {
            loop.assertInLoop()
            stored = newValue
        }
        _modify {
            loop.assertInLoop()
            yield &stored
        }
    }
}

/// Shared mutable state that lives on one `EventLoop`: a class, so every holder sees the
/// same value; `Sendable`, so it can be held by types that cross threads; `value` only on
/// `loop`, checked on every access in debug builds like `LoopBound`.
public final class LoopBoundBox<Value>: @unchecked Sendable {  // `stored` is reached only on `loop`, checked in debug
    /// The loop `value` belongs to.
    public let loop: EventLoop
    @usableFromInline var stored: Value

    /// Boxes `value` on `loop`; call it on that loop (or while the loop does not run).
    public init(_ value: Value, loop: EventLoop) {
        loop.assertInLoop()
        self.loop = loop
        self.stored = value
    }

    /// The value; on `loop` only.
    @inlinable
    public var value: Value {
        get {
            loop.assertInLoop()
            return stored
        }
        set {
            loop.assertInLoop()
            stored = newValue
        }
        _modify {
            loop.assertInLoop()
            yield &stored
        }
    }
}

extension EventLoop {
    /// True on the loop's thread, and on any thread while the loop's thread does not run
    /// (before it starts the builder owns the loop's state; after `stop`, whoever stopped
    /// it). What `assertInLoop` checks.
    public var isConfinedHere: Bool { isInLoop || !isRunning }

    /// Traps in debug builds when called off the loop's thread (while the loop runs);
    /// compiled out of release builds. Put it where a loop-only method is entered.
    @inlinable
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isConfinedHere, "not on the event loop's thread", file: file, line: line)
    }

    /// Traps, in release builds too, when called off the loop's thread (while the loop
    /// runs): for the few places where a wrong thread would corrupt more than a value.
    @inlinable
    public func preconditionInLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isConfinedHere, "not on the event loop's thread", file: file, line: line)
    }
}
