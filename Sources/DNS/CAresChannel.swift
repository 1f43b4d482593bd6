import CAres
import Glibc
import IOCore

/// c-ares, wrapped once: the only file that sees a c-ares pointer. One channel per resolver,
/// confined to its event loop: c-ares's sockets are watched by the loop (the socket-state
/// callback registers and unregisters them), its timeouts are a loop timer, and it has no
/// thread of its own. Nothing here blocks: queries are sent and answers read when the loop
/// says a socket is ready.
///
/// Query callbacks only queue their outcome; the queue is delivered after c-ares returns,
/// so a completion may start new queries without re-entering c-ares.
final class CAresChannel {
    typealias Completion = (DNSAnswer) -> Void

    private let loop: EventLoop
    private var channel: ares_channel?
    /// Sockets c-ares asked us to watch.
    private var watched = Set<Int32>()
    private var timer: EventLoop.Timer?
    private var finished: [(Completion, DNSAnswer)] = []
    private var delivering = false
    private var deliveryScheduled = false
    /// Queries sent to c-ares (`/metrics`, tests).
    private(set) var queriesSent = 0

    /// Boxed per query and handed to c-ares through `Unmanaged` (retained until its callback).
    private final class Query {
        let type: DNSRecordType
        let completion: Completion
        weak var owner: CAresChannel?
        init(type: DNSRecordType, completion: @escaping Completion, owner: CAresChannel) {
            self.type = type
            self.completion = completion
            self.owner = owner
        }
    }

    private static let libraryReady: Int32 = CAres_library_init()

    /// Opens a channel: the servers given, or the system's (/etc/resolv.conf) when none.
    /// On the loop (asserted in debug builds).
    init(loop: EventLoop, configuration: DNSResolverConfiguration) throws(DNSFailure) {
        self.loop = loop
        guard Self.libraryReady == CAres_success() else { throw .resolverUnavailable("ares_library_init failed") }
        var options = ares_options()
        options.flags = CAres_flags()
        options.timeout = Int32(clamping: configuration.timeoutMs)
        options.tries = Int32(clamping: configuration.tries)
        options.sock_state_cb = { data, fd, readable, writable in
            guard let data else { return }
            Unmanaged<CAresChannel>.fromOpaque(data).takeUnretainedValue().socketState(fd, readable != 0, writable != 0)
        }
        options.sock_state_cb_data = Unmanaged.passUnretained(self).toOpaque()
        var created: ares_channel?
        let status = ares_init_options(&created, &options, CAres_option_mask())
        guard status == CAres_success(), let created else {
            throw .resolverUnavailable("ares_init_options: " + String(cString: ares_strerror(status)))
        }
        channel = created
        if !configuration.servers.isEmpty {
            let csv = configuration.servers.map(\.description).joined(separator: ",")
            let set = ares_set_servers_ports_csv(created, csv)
            guard set == CAres_success() else {
                ares_destroy(created)
                channel = nil
                throw .resolverUnavailable("DNS servers \(csv): " + String(cString: ares_strerror(set)))
            }
        }
    }

    deinit {
        if let channel { ares_destroy(channel) }
    }

    /// Asks for `type` records of `name` (as given: no search domains). `completion` runs on
    /// the loop, never before this returns. On the loop (asserted in debug builds).
    func query(_ name: String, _ type: DNSRecordType, completion: @escaping Completion) {
        loop.assertInLoop()
        guard let channel else {
            finish(completion, .failure(.resolverUnavailable("closed")))
            return
        }
        let box = Unmanaged.passRetained(Query(type: type, completion: completion, owner: self)).toOpaque()
        queriesSent += 1
        ares_query(
            channel, name, 1 /* class IN */, Int32(type.rawValue),
            { arg, status, _, abuf, alen in
                guard let arg else { return }
                let query = Unmanaged<Query>.fromOpaque(arg).takeRetainedValue()
                let bytes = abuf.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, alen)))) } ?? []
                query.owner?.finish(
                    query.completion, CAresChannel.answer(status: status, bytes: bytes, type: query.type))
            }, box)
        // A query c-ares refused at once (a bad name) finished inside ares_query: deliver it
        // on a later turn of the loop, as every other answer.
        if !finished.isEmpty && !delivering && !deliveryScheduled {
            deliveryScheduled = true
            loop.schedule(after: 0) { [weak self] in
                self?.deliveryScheduled = false
                self?.deliver()
            }
        }
        rearm()
    }

    /// Addresses of `name` in /etc/hosts (a local file; c-ares reads it, no network).
    func hostsFile(_ name: String, _ type: DNSRecordType) -> [String] {
        guard let channel, type == .a || type == .aaaa else { return [] }
        let family = type == .a ? AF_INET : AF_INET6
        var host: UnsafeMutablePointer<hostent>?
        guard ares_gethostbyname_file(channel, name, family, &host) == CAres_success(), let host else { return [] }
        defer { ares_free_hostent(host) }
        var out: [String] = []
        var i: Int32 = 0
        while let raw = CAres_hostent_address(host, i) {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if inet_ntop(family, raw, &text, socklen_t(text.count)) != nil {
                out.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            i += 1
        }
        return out
    }

    /// Cancels every query (their completions get `.resolverUnavailable`) and closes the
    /// sockets. On the loop (asserted in debug builds).
    func close() {
        loop.assertInLoop()
        guard let channel else { return }
        self.channel = nil
        ares_destroy(channel)  // callbacks run with ARES_EDESTRUCTION, sockets are released
        loop.cancel(timer)
        for fd in watched { loop.unregister(fd: fd) }
        watched.removeAll()
        deliver()
    }

    // MARK: Driven by the loop

    private func socketState(_ fd: Int32, _ readable: Bool, _ writable: Bool) {
        guard readable || writable else {
            if watched.remove(fd) != nil { loop.unregister(fd: fd) }
            return
        }
        if watched.insert(fd).inserted {
            loop.register(fd: fd) { [unowned self] in process(read: fd, write: CAres_socket_bad()) }
        }
        loop.setReading(fd: fd, readable)
        loop.watchWritable(fd: fd, writable ? { [unowned self] in process(read: CAres_socket_bad(), write: fd) } : nil)
    }

    private func process(read: Int32, write: Int32) {
        guard let channel else { return }
        ares_process_fd(channel, read, write)
        deliver()
        rearm()
    }

    /// One loop timer at c-ares's next deadline (a retry or a timeout).
    private func rearm() {
        loop.cancel(timer)
        timer = nil
        guard let channel else { return }
        var tv = timeval()
        guard ares_timeout(channel, nil, &tv) != nil else { return }
        let delay = Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6
        timer = loop.schedule(after: delay) { [weak self] in
            self?.timer = nil
            self?.process(read: CAres_socket_bad(), write: CAres_socket_bad())
        }
    }

    private func finish(_ completion: @escaping Completion, _ answer: DNSAnswer) {
        finished.append((completion, answer))
    }

    private func deliver() {
        guard !delivering else { return }
        delivering = true
        defer { delivering = false }
        while !finished.isEmpty {
            let (completion, answer) = finished.removeFirst()
            completion(answer)
        }
    }

    /// A callback's status and bytes as an answer.
    private static func answer(status: Int32, bytes: [UInt8], type: DNSRecordType) -> DNSAnswer {
        if status == CAres_success() {
            do throws(DNSFailure) {
                return .success(try DNSMessage.records(of: type, in: bytes))
            } catch {
                return .failure(error)
            }
        }
        let failure: DNSFailure =
            switch status {
            case CAres_enodata(): .noData
            case CAres_enotfound(): .noSuchName
            case CAres_eservfail(): .serverFailure("SERVFAIL")
            case CAres_erefused(): .serverFailure("REFUSED")
            case CAres_enotimp(): .serverFailure("NOTIMP")
            case CAres_eformerr(): .serverFailure("FORMERR")
            case CAres_etimeout(): .timeout
            case CAres_econnrefused(): .unreachable
            case CAres_ebadname(): .badName
            case CAres_edestruction(), CAres_ecancelled(): .resolverUnavailable("shut down")
            default: .serverFailure(String(cString: ares_strerror(status)))
            }
        return .failure(failure)
    }
}
