/// Cuts frames out of a byte stream: bytes in, zero or more whole frames out, or an error that
/// classifies itself (the connection then ends with `.framing(error)`). A framer holds the
/// bytes of a frame not yet complete; `pending` tells the connection one has begun, which
/// starts its frame deadline. SIP's `SIPStreamFramer` (RFC 3261 §18.3) is one.
public protocol StreamFramer {
    /// One complete unit (a SIP message, an HTTP request head, a WebSocket frame).
    associatedtype Frame
    /// Why the stream cannot be framed; nothing after it can be either.
    associatedtype Failure: Error & Sendable

    /// Appends bytes read from the stream and returns every frame now complete.
    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [Frame]
    /// Bytes received that are not yet part of a complete frame.
    var pending: Int { get }
}
