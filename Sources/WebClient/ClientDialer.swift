import DNS
import IOCore
import TLS

/// Opens one client connection on the client loop: the host resolved with the DNS module
/// (`ClientLoop.addresses`), then `StreamConnection.connect(to:)` to each address in turn,
/// `request` sent on each attempt (it waits in the connection's queue, and over TLS until
/// the server's certificate and name checked out). A connect that fails moves on to the
/// next address; any other ending (a TLS failure is the server's whichever address, a
/// deadline has used up the time) goes to the owner. Confined to the client loop.
final class ClientDialer<Framer: StreamFramer> {
    let loop: EventLoop
    /// The URL's host (the name checked on the certificate) and port.
    let host: String
    let port: Int
    private let tls: ClientTLS?
    private let makeFramer: () -> Framer
    /// The connection's bounds, asked for each attempt (its deadlines are what time is left).
    private let settings: () -> StreamConnectionSettings
    /// The connection that answered, or the attempt under way.
    private(set) var connection: StreamConnection<Framer>?
    private var remaining: [SocketAddress] = []
    /// The first address's failure is the one reported (usually the IPv4 answer).
    private var firstFailure: IrisTransportError?
    private var request: [UInt8] = []
    private var cancelled = false

    /// Frames from the open connection.
    var onFrames: ((StreamConnection<Framer>, [Framer.Frame]) -> Void)?
    /// The connection ended (nil: closed by us) after it connected, or during its TLS
    /// handshake or a deadline.
    var onClose: ((StreamConnection<Framer>, StreamFailure?) -> Void)?
    /// No address could be reached (or the name not resolved): the first failure.
    var onUnreachable: ((IrisTransportError) -> Void)?

    init(
        host: String, port: Int, tls: ClientTLS?, loop: EventLoop, settings: @escaping () -> StreamConnectionSettings,
        framer: @escaping () -> Framer
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.loop = loop
        self.settings = settings
        self.makeFramer = framer
    }

    /// Resolves the host through `dns` and connects; the handlers must be set.
    func start(request: [UInt8], dns: DNSResolverConfiguration) {
        self.request = request
        ClientLoop.shared.addresses(of: host, port: port, dns: dns) { [self] result in
            guard !cancelled else { return }
            switch result {
            case .success(let addresses):
                remaining = addresses
                next()
            case .failure(let error):
                unreachable(error)
            }
        }
    }

    /// Stops trying; the connection, if any, is aborted by the owner.
    func cancel() {
        cancelled = true
        remaining = []
    }

    private func next() {
        guard !cancelled else { return }
        guard !remaining.isEmpty else {
            return unreachable(firstFailure ?? .connectionRefused(host: host, port: port))
        }
        let address = remaining.removeFirst()
        var security: TLSStream?
        if let tls {
            guard let stream = TLSStream(client: tls.context, target: tls.target) else {
                return unreachable(
                    .tls(host: host, port: port, failure: .handshakeFailed("cannot create a TLS session")))
            }
            security = stream
        }
        let made: StreamConnection<Framer>
        do {
            made = try StreamConnection.connect(
                to: address, loop: loop, framer: makeFramer(), security: security,
                settings: settings())
        } catch {
            firstFailure =
                firstFailure ?? IrisTransportError(error, peer: address, host: host, operation: "connect", seconds: 0)
            return next()
        }
        connection = made
        made.onFrames = { [unowned self] c, frames in onFrames?(c, frames) }
        made.onClose = { [self] c, failure in
            if case .connect = failure, !cancelled {
                firstFailure =
                    firstFailure
                    ?? IrisTransportError(failure!, peer: address, host: host, operation: "connect", seconds: 0)
                connection = nil
                return next()
            }
            onClose?(c, failure)
        }
        made.start()
        made.send(request)
    }

    private func unreachable(_ error: IrisTransportError) {
        let handler = onUnreachable
        onUnreachable = nil
        onFrames = nil
        onClose = nil
        handler?(error)
    }
}
