import Foundation
import Glibc
import SIP
import TestSupport
import Testing
import WebClient

/// Headless Chromium for the dialer page's tests, driven over the DevTools protocol with the
/// project's own `WebSocketClient`. A fake microphone plays a generated tone; WebRTC may use
/// loopback. It runs on the host's 127.0.0.1 (not in a network namespace: the gateway under
/// test listens there). `stop()` (in a `defer`) kills it and removes its folder.
final class Chromium: @unchecked Sendable {
    /// The Debian package's binary (`make deps` installs `chromium`); nil when absent.
    static let executable: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static var isAvailable: Bool { executable != nil }
    static let missing: Comment = "chromium is not installed (make deps installs the Debian package)"

    /// The user-data dir, the fake microphone's WAV and nothing else.
    let directory: URL
    /// The DevTools HTTP and WebSocket port (read from `DevToolsActivePort`).
    private(set) var port = 0
    private var process: ChildProcess!

    /// Starts Chromium with a fake microphone playing `toneHz` (30 s, then silence: `%noloop`).
    init(toneHz: Double = 440, timeout: Double = 20) async throws {
        guard let executable = Self.executable else { throw SocketError("chromium is not installed", code: ENOENT) }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-chromium-\(UUID().uuidString.prefix(8))")
        let profile = directory.appendingPathComponent("profile")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let wav = directory.appendingPathComponent("tone-\(Int(toneHz)).wav")
        try Self.toneWAV(hz: toneHz, seconds: 30).write(to: wav)
        let log = directory.appendingPathComponent("chromium.log")
        let arguments = [
            "--headless=new", "--no-sandbox", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
            "--user-data-dir=\(profile.path)", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            "--use-file-for-fake-audio-capture=\(wav.path)%noloop",
            "--allow-loopback-in-peer-connection", "--autoplay-policy=no-user-gesture-required",
            "--window-size=800,900", "about:blank"
        ]
        process = try ChildProcess(executable, arguments, outputFile: log)
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        _ = await eventually(timeout: timeout, pollInterval: 0.05) { [self] in
            if let text = try? String(contentsOf: portFile, encoding: .utf8),
                let first = text.split(separator: "\n").first, let p = Int(first), p > 0
            {
                port = p
            }
            return port > 0 || !process.isRunning
        }
        guard port > 0 else {
            let printed = process.output
            stop()
            throw SocketError("chromium did not start: \(printed.suffix(2000))", code: ETIMEDOUT)
        }
    }

    /// A new tab showing `url`, loaded (`document.readyState == "complete"`).
    func open(_ url: String, timeout: Double = 15) async throws -> ChromiumPage {
        let client = try HTTPClient(baseURL: "http://127.0.0.1:\(port)")
        let answer = try await client.request(method: "PUT", path: "/json/new?about:blank", timeout: timeout)
        guard answer.status == 200,
            let target = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
            let socketURL = target["webSocketDebuggerUrl"] as? String
        else {
            throw SocketError(
                "DevTools /json/new answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))",
                code: EPROTO)
        }
        let page = try ChromiumPage(socketURL: socketURL)
        try await page.navigate(url, timeout: timeout)
        return page
    }

    /// SIGTERM, SIGKILL after 3 s (to its renderer and helper processes too), then the
    /// folder goes (kept with IRISGW_E2E_KEEP set). Does not wait: the rest happens once
    /// the browser has exited.
    func stop() {
        let helpers = process.isRunning ? Self.descendants(of: process.processIdentifier) : []
        let directory = directory
        process.stop(grace: 3) {
            // Helpers that outlived the browser (it was killed, or they hung).
            for pid in helpers where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            if ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
                try? FileManager.default.removeItem(at: directory)
            }
        }
    }

    /// Every process below `root` (from /proc: the parent is the field after the name).
    static func descendants(of root: pid_t) -> [pid_t] {
        var parents: [pid_t: pid_t] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[pid] = parent }
        }
        var found: [pid_t] = []
        var frontier = [root]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }

    /// 16-bit mono PCM at 48 kHz: a sine of `hz` at half of full scale.
    static func toneWAV(hz: Double, seconds: Double) -> Data {
        let rate = 48_000
        let count = Int(Double(rate) * seconds)
        var data = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + count * 2));
        data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(1); u32(UInt32(rate)); u32(UInt32(rate * 2));
        u16(2); u16(16)
        data.append(contentsOf: Array("data".utf8)); u32(UInt32(count * 2))
        var samples = [Int16](repeating: 0, count: count)
        for i in 0..<count { samples[i] = Int16(16_000 * sin(2 * Double.pi * hz * Double(i) / Double(rate))) }
        samples.withUnsafeBytes { data.append(contentsOf: $0) }  // little-endian host (x86-64, arm64)
        return data
    }
}

/// One tab, over its DevTools WebSocket: evaluate JavaScript, wait for conditions, take
/// screenshots, collect console errors and uncaught exceptions. Use it from one task.
final class ChromiumPage: @unchecked Sendable {
    private let socket: WebSocketClient
    private var nextId = 0
    /// `console.error` messages, uncaught exceptions and error log entries, in order.
    private(set) var consoleErrors: [String] = []
    /// Every console message (`type: text`), for failure messages.
    private(set) var console: [String] = []

    init(socketURL: String) throws {
        socket = try WebSocketClient(url: socketURL, timeout: 10, maxMessageBytes: 64 << 20)
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] { _ = try call(domain) }
    }

    deinit { socket.close() }

    /// Sends a DevTools command and returns its `result`, handling the events that come
    /// before it. Throws the protocol's error, or a timeout.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:], timeout: Double = 15) throws -> [String: Any] {
        nextId += 1
        let id = nextId
        let message = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        try socket.send(text: String(decoding: message, as: UTF8.self))
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw SocketError("DevTools \(method): no answer in \(timeout) s", code: ETIMEDOUT) }
            guard let text = try next(timeout: left) else {
                throw SocketError("DevTools socket closed during \(method)", code: EPIPE)
            }
            if text.isEmpty { continue }
            guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                continue
            }
            if let event = object["method"] as? String {
                record(event, object["params"] as? [String: Any] ?? [:])
                continue
            }
            guard object["id"] as? Int == id else { continue }
            if let error = object["error"] as? [String: Any] {
                throw SocketError("DevTools \(method): \(error["message"] ?? error)", code: EPROTO)
            }
            return object["result"] as? [String: Any] ?? [:]
        }
    }

    /// The next message; "" when none came within `timeout` (the socket stays usable); nil
    /// once it is closed.
    private func next(timeout: Double) throws -> String? {
        do {
            return try socket.receive(timeout: timeout)
        } catch {
            if case .timeout = error { return "" }
            throw error
        }
    }

    private func record(_ event: String, _ params: [String: Any]) {
        switch event {
        case "Runtime.consoleAPICalled":
            let args = (params["args"] as? [[String: Any]] ?? []).map { "\($0["value"] ?? $0["description"] ?? "?")" }
            let line = "\(params["type"] ?? "log"): " + args.joined(separator: " ")
            console.append(line)
            if params["type"] as? String == "error" { consoleErrors.append(line) }
        case "Runtime.exceptionThrown":
            let details = params["exceptionDetails"] as? [String: Any] ?? [:]
            let exception = details["exception"] as? [String: Any]
            consoleErrors.append("exception: \(exception?["description"] ?? details["text"] ?? "?")")
        case "Log.entryAdded":
            let entry = params["entry"] as? [String: Any] ?? [:]
            if entry["level"] as? String == "error" {
                consoleErrors.append("log: \(entry["text"] ?? "?") \(entry["url"] ?? "")")
            }
        default:
            break
        }
    }

    /// Loads `url` and waits until the document is complete.
    func navigate(_ url: String, timeout: Double = 15) async throws {
        let result = try call("Page.navigate", ["url": url], timeout: timeout)
        if let error = result["errorText"] as? String {
            throw SocketError("navigating to \(url): \(error)", code: EPROTO)
        }
        guard try await waitFor("document.readyState === 'complete'", timeout: timeout) else {
            throw SocketError("\(url) did not finish loading in \(timeout) s", code: ETIMEDOUT)
        }
    }

    /// The value of `expression` (JSON-able values come back as Foundation objects; a
    /// promise is awaited when `awaitPromise`). Throws the page's exception.
    @discardableResult
    func evaluate(_ expression: String, awaitPromise: Bool = false, timeout: Double = 15) throws -> Any? {
        let result = try call(
            "Runtime.evaluate",
            [
                "expression": expression, "awaitPromise": awaitPromise,
                "returnByValue": true, "userGesture": true
            ], timeout: timeout)
        if let details = result["exceptionDetails"] as? [String: Any] {
            let exception = details["exception"] as? [String: Any]
            throw SocketError(
                "\(expression.prefix(200)): \(exception?["description"] ?? details["text"] ?? "exception")",
                code: EPROTO)
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Polls `condition` (a JS expression) every 100 ms until it is truthy or `timeout`
    /// passes; an exception counts as false.
    func waitFor(_ condition: String, timeout: Double) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return await eventually(timeout: timeout, pollInterval: 0.1) {
            (try? evaluate("!!(\(condition))", timeout: max(1, deadline.timeIntervalSinceNow))) as? Bool == true
        }
    }

    /// A PNG of the viewport, written to `file`; returns its bytes.
    @discardableResult
    func screenshot(to file: URL) throws -> Data {
        let result = try call("Page.captureScreenshot", ["format": "png"], timeout: 20)
        guard let base64 = result["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw SocketError("Page.captureScreenshot gave no image", code: EPROTO)
        }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try png.write(to: file)
        return png
    }

    /// How much of `png` differs from its most common colour (0-1) and how many colours it
    /// has, decoded by the browser itself (no image library here). A blank page is (0, 1).
    func inkCoverage(png: Data) throws -> (coverage: Double, colours: Int) {
        let script = """
            (async () => {
              const bin = atob('\(png.base64EncodedString())');
              const bytes = new Uint8Array(bin.length);
              for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
              const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
              const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
              const ctx = canvas.getContext('2d');
              ctx.drawImage(bitmap, 0, 0);
              const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
              const counts = new Map();
              for (let i = 0; i < data.length; i += 4) {
                const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
                counts.set(key, (counts.get(key) || 0) + 1);
              }
              const top = Math.max(...counts.values());
              return [1 - top / (data.length / 4), counts.size];
            })()
            """
        guard let pair = try evaluate(script, awaitPromise: true, timeout: 30) as? [Any], pair.count == 2,
            let coverage = (pair[0] as? NSNumber)?.doubleValue, let colours = (pair[1] as? NSNumber)?.intValue
        else {
            throw SocketError("could not decode the screenshot in the page", code: EPROTO)
        }
        return (coverage, colours)
    }
}

/// Where tests keep what a human may want to look at afterwards: `.build/test-artifacts/`.
enum TestArtifacts {
    static var directory: URL {
        var folder = URL(fileURLWithPath: GatewayProcess.binary).deletingLastPathComponent()
        while folder.path != "/", folder.lastPathComponent != ".build" { folder = folder.deletingLastPathComponent() }
        if folder.path == "/" { folder = FileManager.default.temporaryDirectory }
        return folder.appendingPathComponent("test-artifacts")
    }
}
