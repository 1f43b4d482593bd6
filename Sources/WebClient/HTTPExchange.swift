import DNS
import IOCore

/// One request and its response on the client loop: the connection opened by a
/// `ClientDialer`, the request sent, the response cut by an `HTTPResponseFramer`. Bounded by
/// the deadline `timeout` (the name, every address tried, the answer): the connection's
/// deadlines are what time is left, and one loop timer covers the lookup. `completion`
/// runs once, on the loop. Confined to the client loop.
final class HTTPExchange {
    typealias Completion = (Result<HTTPClientResponse, IrisTransportError>) -> Void

    private let dialer: ClientDialer<HTTPResponseFramer>
    /// "GET /v1/calls", for messages.
    private let requestLine: String
    private let timeout: Double
    private let deadline: Double
    private var completion: Completion?
    private var timer: EventLoop.Timer?

    /// Starts at once (on the loop).
    @discardableResult
    init(
        url: ClientURL, tls: ClientTLS?, dns: DNSResolverConfiguration, method: String, target: String,
        message: [UInt8],
        maxBodyBytes: Int, timeout: Double, loop: EventLoop, completion: @escaping Completion
    ) {
        requestLine = "\(method) \(target)"
        self.timeout = timeout
        let deadline = EventLoop.now() + (timeout.isNaN ? 0 : max(0, timeout))
        self.deadline = deadline
        self.completion = completion
        let left = { max(0.001, deadline - EventLoop.now()) }
        dialer = ClientDialer(
            host: url.host, port: url.port, tls: tls, loop: loop,
            settings: {
                // The request may be larger than the default queue; it is queued whole.
                StreamConnectionSettings(
                    handshakeTimeout: left(), firstFrameTimeout: left(), frameTimeout: left(),
                    maxQueuedBytes: max(262_144, message.count + 65_536))
            }, framer: { HTTPResponseFramer(method: method, maxBodyBytes: maxBodyBytes) })
        dialer.onFrames = { [unowned self] c, responses in
            guard let response = responses.first else { return }
            finish(.success(response))
        }
        dialer.onClose = { [unowned self] c, failure in
            guard let failure else { return finish(.failure(.connectionClosed(during: operation(c)))) }
            if failure.isEndOfStream {
                do throws(IrisTransportError) {
                    return finish(.success(try c.framer.endOfStream(during: operation(c))))
                } catch {
                    return finish(.failure(error))
                }
            }
            finish(
                .failure(
                    IrisTransportError(failure, peer: c.peer, host: url.host, operation: operation(c), seconds: timeout)
                ))
        }
        dialer.onUnreachable = { [unowned self] error in finish(.failure(error)) }
        timer = loop.schedule(after: deadline - EventLoop.now()) { [unowned self] in
            timer = nil
            let doing = dialer.connection.map(operation) ?? "resolving \(url.host)"
            finish(.failure(.timeout(operation: doing, seconds: timeout)))
        }
        // The exchange keeps itself alive until it finishes (the timer and dialer hold it).
        retainSelf = self
        dialer.start(request: message, dns: dns)
    }

    /// Held until `finish`: nothing else owns a request in flight.
    private var retainSelf: HTTPExchange?

    /// What the connection was doing, for a timeout or an early end.
    private func operation(_ c: StreamConnection<HTTPResponseFramer>) -> String {
        if c.isConnecting { return "connect to \(c.peer)" }
        if c.security?.isHandshaking == true { return "the TLS handshake with \(c.peer)" }
        if c.framer.pending > 0 { return "reading the response to \(requestLine)" }
        return "waiting for the response to \(requestLine)"
    }

    private func finish(_ result: Result<HTTPClientResponse, IrisTransportError>) {
        guard let completion else { return }
        self.completion = nil
        dialer.loop.cancel(timer)
        timer = nil
        dialer.cancel()
        dialer.onFrames = nil
        dialer.onClose = nil
        dialer.onUnreachable = nil
        dialer.connection?.close()
        retainSelf = nil
        completion(result)
    }
}
