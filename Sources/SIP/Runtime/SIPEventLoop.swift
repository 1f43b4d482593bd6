// Socket addresses and the event loop live in IOCore, shared with the media threads; users
// of SIP see them through this module.
@_exported import IOCore

/// The SIP stack's loop is an ordinary `EventLoop`.
public typealias SIPEventLoop = EventLoop
