// The dialer page's files at /app: served without a key, with their types and cache and
// security headers; nothing outside the folder, no dot files, no other methods.

import ControlAPI
import Foundation
import Testing

@Suite struct StaticFilesTests {
    /// A web folder with the page's three files, a dot file, a subfolder and a link out of it;
    /// a secret beside the folder.
    static func folder() throws -> URL {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-web-\(UUID().uuidString.prefix(8))")
        let app = base.appendingPathComponent("app")
        try FileManager.default.createDirectory(
            at: app.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try "<!doctype html><title>t</title>".write(
            to: app.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try "console.log(1)".write(to: app.appendingPathComponent("app.js"), atomically: true, encoding: .utf8)
        try "body{}".write(to: app.appendingPathComponent("app.css"), atomically: true, encoding: .utf8)
        try "hidden".write(to: app.appendingPathComponent(".env"), atomically: true, encoding: .utf8)
        try "nested".write(to: app.appendingPathComponent("sub/x.js"), atomically: true, encoding: .utf8)
        try "the api key".write(to: base.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: app.appendingPathComponent("link.txt").path,
            withDestinationPath: base.appendingPathComponent("secret.txt").path)
        try FileManager.default.createSymbolicLink(
            atPath: app.appendingPathComponent("out.js").path,
            withDestinationPath: base.appendingPathComponent("secret.txt").path)
        return base
    }

    @Test func servesThePageWithTypesAndHeadersAndNothingElse() async throws {
        let base = try Self.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let api = ControlAPIServer(
            key: "k", configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"),
            webFiles: StaticFiles(directory: base.appendingPathComponent("app").path))
        let port = try api.start()
        defer { api.stop() }

        for (path, type) in [
            ("/app", "text/html; charset=utf-8"), ("/app/", "text/html; charset=utf-8"),
            ("/app/index.html", "text/html; charset=utf-8"),
            ("/app/app.js", "text/javascript; charset=utf-8"), ("/app/app.css", "text/css; charset=utf-8")
        ] {
            let r = try await httpRequest(port: port, "GET", path)
            #expect(r.status == 200, "\(path): \(r.status) \(r.text)")
            #expect(r.headers["content-type"] == type, "\(path)")
            #expect(r.headers["cache-control"] == "no-cache")
            #expect(r.headers["x-content-type-options"] == "nosniff")
            #expect(r.headers["content-security-policy"]?.contains("default-src 'self'") == true)
        }
        let head = try await httpRequest(port: port, "HEAD", "/app/app.js")
        #expect(head.status == 200 && head.body.isEmpty)

        // Outside the folder, hidden, nested, linked out, unknown types: 404 JSON, never the file.
        for path in [
            "/app/../secret.txt", "/app/..%2Fsecret.txt", "/app/%2e%2e/secret.txt", "/app/.env", "/app/sub/x.js",
            "/app/link.txt", "/app/out.js", "/app/missing.js", "/app/app.js%00.html", "/app//etc/passwd",
            "/app/secret.txt"
        ] {
            let r = try await httpRequest(port: port, "GET", path)
            #expect((400..<500).contains(r.status), "\(path): \(r.status)")
            #expect(
                !r.text.contains("the api key") && !r.text.contains("hidden") && !r.text.contains("nested"),
                "\(path): \(r.text)")
        }
        let post = try await httpRequest(port: port, "POST", "/app/app.js")
        #expect(post.status == 405)
        #expect(post.text.contains("\"code\":-103"))
    }

    @Test func withoutFilesAppIsAJSON404() async throws {
        let api = ControlAPIServer(key: "k", configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"))
        let port = try api.start()
        defer { api.stop() }
        let r = try await httpRequest(port: port, "GET", "/app")
        #expect(r.status == 404)
        #expect(r.text.contains("not installed"))
    }

    @Test func locateFindsTheCheckoutsFolderAboveTheBinary() throws {
        let base = try Self.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        // <checkout>/web/app beside <checkout>/.build/x86_64-unknown-linux-gnu/debug/irisgw
        let checkout = base.appendingPathComponent("checkout")
        try FileManager.default.createDirectory(
            at: checkout.appendingPathComponent("web"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: base.appendingPathComponent("app"), to: checkout.appendingPathComponent("web/app"))
        let binary = checkout.appendingPathComponent(".build/x86_64-unknown-linux-gnu/debug/irisgw").path
        #expect(
            StaticFiles.locate(configured: nil, executable: binary)?.directory
                == checkout.appendingPathComponent("web/app").path)
        // An installed binary: <prefix>/bin/irisgw and <prefix>/share/irisgw/app.
        let prefix = base.appendingPathComponent("usr")
        try FileManager.default.createDirectory(
            at: prefix.appendingPathComponent("share/irisgw"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: base.appendingPathComponent("app"), to: prefix.appendingPathComponent("share/irisgw/app"))
        #expect(
            StaticFiles.locate(configured: nil, executable: prefix.appendingPathComponent("bin/irisgw").path)?.directory
                == prefix.appendingPathComponent("share/irisgw/app").path)
        #expect(StaticFiles.locate(configured: "/somewhere", executable: binary)?.directory == "/somewhere")
    }
}
