// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "irisgw",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "irisgw", targets: ["irisgw"]),
        .library(name: "SIP", targets: ["SIP"]),
        .library(name: "Gateway", targets: ["Gateway"])
    ],
    targets: [
        // System libraries from Debian packages (see Makefile `deps`).
        .systemLibrary(name: "COSIP", pkgConfig: "libosip2", providers: [.apt(["libosip2-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSpanDSP", pkgConfig: "spandsp", providers: [.apt(["libspandsp-dev", "libtiff-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CAres", pkgConfig: "libcares", providers: [.apt(["libc-ares-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),

        // Linux headers Glibc does not export (epoll, eventfd); no library to link.
        .systemLibrary(name: "CLinux"),
        // io_uring (Debian's liburing 2.3) for the media threads' batched UDP I/O.
        .systemLibrary(name: "CLiburing", pkgConfig: "liburing", providers: [.apt(["liburing-dev"])]),

        // Leveled, per-component log lines on stderr, as text or one JSON object per line;
        // nothing but Glibc below it, so every layer may log.
        .target(name: "Logging"),
        // Sockets and event loops shared by the SIP thread and the media threads.
        .target(name: "IOCore", dependencies: ["CLinux", "CLiburing"]),
        // Asynchronous DNS (c-ares driven by an IOCore loop) with a TTL cache; SIP locates
        // servers with it (RFC 3263), nothing in it knows SIP.
        .target(name: "DNS", dependencies: ["CAres", "IOCore"]),
        // Hashes, HMACs, randomness and constant-time compare from libcrypto, with hex and
        // base64 (RFC 4648): digest auth, tokens, the API key, STUN and the WebSocket handshake.
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        // HTTP/1.1 grammar (RFC 9110/9112 heads, field syntax, chunked bodies, reason phrases)
        // and RFC 6455 WebSocket framing, shared by the control API's server and WebClient.
        .target(name: "HTTP", dependencies: ["Crypto"]),
        // TLS over memory BIOs (OpenSSL wrapped once): contexts, a byte-driven stream, the
        // certificate name policies (SIP RFC 5922, HTTPS RFC 6125). SIP, the control API and
        // WebClient put it between their sockets and their parsers.
        .target(name: "TLS", dependencies: ["COpenSSL", "IOCore", "Crypto"]),
        // SDP (RFC 8866) as values: session and media descriptions, rtpmap, SDES crypto
        // (RFC 4568), the WebRTC attributes; a leaf that SIP, ICE, Gateway and the clients share.
        .target(name: "SDP", dependencies: ["Crypto"]),
        .target(name: "SIP", dependencies: ["COSIP", "COpenSSL", "CLinux", "IOCore", "DNS", "TLS", "Crypto", "SDP"]),
        // STUN (RFC 8489) and the controlled ICE-lite agent (RFC 8445 §2.5, consent RFC 7675)
        // for the WebRTC platform leg: socket-less and clock-less; the media engine feeds it.
        .target(name: "ICE", dependencies: ["Crypto", "IOCore", "SDP"]),
        // libsrtp's AES-ICM and HMAC-SHA1 on OpenSSL (Debian's libsrtp2 does them with NSS).
        .target(name: "CSRTPOpenSSL", dependencies: ["CSRTP", "COpenSSL"]),
        .target(
            name: "Media",
            dependencies: ["COpus", "CSpanDSP", "CSRTP", "CSRTPOpenSSL", "CLinux", "IOCore", "ICE", "TLS", "Logging"]),
        .target(name: "IrisAPI"),
        // Cluster mode: node membership, dead-node takeover, cluster-wide trunk limits, locks,
        // the session directory and events, kept in Redis. Its machines are plain values.
        .target(name: "Cluster", dependencies: ["Redis", "IOCore", "IrisAPI", "Crypto", "Logging"]),
        // File and exposition formats with no protocol behind them: JSON5 (profiles, the serve
        // configuration, suites) and the Prometheus text format (`/metrics`, `irisgw test --every`).
        .target(name: "Formats"),
        .target(
            name: "Gateway",
            dependencies: [
                "SIP", "SDP", "Media", "ICE", "TLS", "Crypto", "IrisAPI", "Formats", "CSQLite", "CPostgres", "Capture",
                "Cluster", "MediaStreams", "Logging"
            ]),
        // HTTP/1.1 + WebSocket server for the control API (an IOCore event loop and a worker
        // pool), routed onto Gateway. The grammar and the framing are the HTTP module's. In a
        // cluster it forwards requests to the node they need with WebClient.
        .target(
            name: "ControlAPI",
            dependencies: [
                "IOCore", "CLinux", "Gateway", "IrisAPI", "Formats", "HTTP", "TLS", "Crypto", "WebClient", "Cluster",
                "Logging"
            ],
            // docs/openapi.yaml (this is a symbolic link to it), served at /v1/openapi.json.
            resources: [.embedInCode("openapi.yaml")]),
        .executableTarget(
            name: "irisgw",
            dependencies: [
                "SIP", "Gateway", "ControlAPI", "IrisClient", "IrisAPI", "WebClient", "DNS", "CarrierTest",
                "CarrierSim",
                "Cluster", "Logging"
            ]),
        // `make bench`: prints `BENCH ...` lines with ratios measured in one run.
        .executableTarget(
            name: "irisgw-bench",
            dependencies: ["SIP", "SDP", "Media", "IrisAPI", "WebClient", "ICE", "TLS", "Speech"]),
        // HTTP/1.1 and WebSocket client on IOCore's stream layer, plain or TLS, names through
        // the DNS module, on one shared client loop (the Swift client's transport, the webhook).
        .target(name: "WebClient", dependencies: ["IOCore", "DNS", "TLS", "Crypto", "HTTP"]),
        // Twilio Media Streams over WebSocket for voice agents: the messages both ways as values
        // and one stream's client (non-blocking, on WebClient); no gateway knowledge.
        .target(name: "MediaStreams", dependencies: ["IOCore", "WebClient", "Crypto", "DNS", "Media"]),
        .target(name: "IrisClient", dependencies: ["SDP", "Media", "IOCore", "IrisAPI", "WebClient"]),
        // `irisgw test`: carrier integration suites run through a gateway's control API.
        // Its `stream` steps run a WebSocket server of their own (IOCore, HTTP) and read Twilio's
        // messages with MediaStreams' codec.
        .target(
            name: "CarrierTest",
            dependencies: ["IrisClient", "IrisAPI", "Formats", "Media", "Capture", "IOCore", "HTTP", "MediaStreams"]),
        // Redis client for the cluster's shared state: pipelined commands on an IOCore loop,
        // replies parsed by hiredis's reader, reconnects with back-off, deadlines, Lua by SHA-1.
        .target(name: "Redis", dependencies: ["IOCore", "CHiredis", "Crypto"]),
        // The built-in carrier simulator behind `make run` and the test suites.
        .target(name: "CarrierSim", dependencies: ["SIP", "SDP", "Media", "IOCore", "Crypto", "Speech"]),
        // Speech from Debian's espeak-ng (run as a process, off any loop), resampled for calls,
        // and the answering-machine set made with it: the simulator, BENCH amd and the tests share it.
        .target(name: "Speech", dependencies: ["Media"]),
        // The two capture formats the field uses: libpcap files (written and read directly)
        // and HEP v3 for HOMER; no library, wire bytes as values.
        .target(name: "Capture", dependencies: ["IOCore", "Crypto"]),

        // What several test targets share (a test PKI made with `openssl`).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Parse, serialize and round trip of captured SDP (carriers, browsers, softphones, RFC corpora).
        .testTarget(name: "SDPTests", dependencies: ["SDP", "TestSupport"]),
        // HMAC (RFC 2202, RFC 4231), hash, hex and base64 (RFC 4648) vectors.
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        // HTTP heads both ways, chunked bodies, WebSocket frames and the RFC 6455 accept key.
        .testTarget(name: "HTTPTests", dependencies: ["HTTP"]),
        // The log lines' two formats (escaping, fields, time stamps) and the levels per component.
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        // The JSON5 reader's grammar, limits and error positions.
        .testTarget(name: "FormatsTests", dependencies: ["Formats"]),
        .testTarget(name: "SIPTests", dependencies: ["SIP", "SDP", "TLS", "TestSupport"]),
        .testTarget(name: "DNSTests", dependencies: ["DNS"]),
        // The cluster's machines (membership, placement) as tables, no socket, no clock.
        .testTarget(name: "ClusterTests", dependencies: ["Cluster", "IrisAPI", "TestSupport"]),
        // The stream layer (listener, connection, framer, TLS slot) on real sockets on 127.0.0.1,
        // loop confinement (LoopBound, assertInLoop) with exit tests for the debug traps, and
        // EventLoop's async `run`.
        .testTarget(name: "IOCoreTests", dependencies: ["IOCore", "TLS", "TestSupport"]),
        .testTarget(name: "ICETests", dependencies: ["ICE", "IOCore", "Crypto", "SDP", "TestSupport"]),
        // DTLS-SRTP (the TLS module's DTLSTransport) in memory and against `openssl s_client` on 127.0.0.1.
        .testTarget(name: "DTLSTests", dependencies: ["TLS", "IOCore", "TestSupport"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "ICE", "TLS", "TestSupport", "Speech"]),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "SDP", "IrisAPI", "CarrierTest", "CarrierSim", "SIP", "IOCore", "TestSupport", "Cluster"
            ]),
        // The audio analysis of `irisgw test` (scores, WAV, RTP to PCM) and the suite steps that use it.
        .testTarget(
            name: "CarrierTestTests",
            dependencies: [
                "CarrierTest", "Media", "IrisClient", "IrisAPI", "IOCore", "Capture", "TestSupport", "WebClient",
                "MediaStreams"
            ]),
        // The message codec (Twilio's examples, refusals), mu-law against SpanDSP, the playout,
        // and streams to a Python agent (PyPI `websockets`, TestSupport's MediaAgent) over ws:// and
        // wss:// on 127.0.0.1.
        .testTarget(name: "MediaStreamsTests", dependencies: ["MediaStreams", "WebClient", "Media", "TestSupport"]),
        .testTarget(name: "IrisClientTests", dependencies: ["IrisClient", "SDP", "WebClient", "Media", "TestSupport"]),
        .testTarget(
            name: "ControlAPITests",
            dependencies: ["ControlAPI", "Gateway", "IrisAPI", "HTTP", "WebClient", "TLS", "TestSupport"]),
        .testTarget(
            name: "CarrierSimTests", dependencies: ["CarrierSim", "SIP", "SDP", "Media", "TestSupport", "Speech"]),
        // RESP parsing split at every byte, and the client against real `redis-server`s on 127.0.0.1
        // (pipelines, scripts, blocking reads, a stopped, restarted or frozen server).
        .testTarget(name: "RedisTests", dependencies: ["Redis", "IOCore", "TestSupport"]),
        // Pcap and HEP round trips, read back by `tshark` and `sngrep`, HEP over UDP on 127.0.0.1.
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "IOCore", "TestSupport"]),
        // The benches' own logic (how the soak closes its calls), against an in-process API server.
        .testTarget(
            name: "BenchTests",
            dependencies: [
                "irisgw-bench", "ControlAPI", "Gateway", "WebClient", "IOCore", "TestSupport", "Speech", "Media"
            ]),
        // Real processes and sockets: SIPp, the irisgw binary, UDP/TCP on 127.0.0.1.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "SIP", "SDP", "Media", "IrisAPI", "IrisClient", "Gateway", "ControlAPI", "CarrierTest", "Capture",
                "TLS", "TestSupport", "irisgw", "WebClient", "DNS"
            ],
            // The pjsua2 peer's Python script (PJSUAPeer.swift runs it from the source tree).
            exclude: ["Peers"])
    ],
    swiftLanguageModes: [.v6]
)
