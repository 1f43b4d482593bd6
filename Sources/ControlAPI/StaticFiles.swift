import Foundation

/// The dialer page's files (`GET /app`, docs/api.md "The dialer page"), read from one
/// directory. Only plain names of known types directly in that directory are served: no
/// subdirectories, no dot files, no `..`, and nothing a symbolic link leads outside it.
public struct StaticFiles: Sendable {
    /// The directory holding `index.html`, `app.js`, `app.css`.
    public let directory: String
    /// The URL path the files are served under.
    public static let prefix = "/app"
    /// Larger files are not served (the page's files are a few KB).
    static let maxFileBytes = 1 << 20

    private static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "json": "application/json", "png": "image/png", "svg": "image/svg+xml", "ico": "image/x-icon",
        "wav": "audio/wav"
    ]

    /// Served with every file: the page loads only its own files and talks only to this API.
    static let securityHeaders: [(String, String)] = [
        ("Cache-Control", "no-cache"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        (
            "Content-Security-Policy",
            "default-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    ]

    public init(directory: String) {
        self.directory = directory
    }

    /// The first directory of these holding `index.html`: `configured` when given (even when
    /// it lacks one: the operator's choice is never second-guessed), else
    /// `<bin>/../share/irisgw/app` (an installed binary), else `web/app` in the executable's
    /// folder or up to five folders above it (`.build/release/irisgw` in a checkout), else
    /// `./web/app`. nil when none has it.
    public static func locate(configured: String?, executable: String = Self.executablePath()) -> StaticFiles? {
        if let configured { return StaticFiles(directory: configured) }
        var candidates: [String] = []
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        candidates.append(folder.appendingPathComponent("../share/irisgw/app").standardized.path)
        for _ in 0..<6 {
            candidates.append(folder.appendingPathComponent("web/app").path)
            folder = folder.deletingLastPathComponent()
        }
        candidates.append(FileManager.default.currentDirectoryPath + "/web/app")
        return candidates.first { FileManager.default.isReadableFile(atPath: $0 + "/index.html") }.map(StaticFiles.init)
    }

    /// This process's executable, symbolic links resolved (`/proc/self/exe`).
    public static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The answer to a GET or HEAD of `path` (under `prefix`); nil when the file does not exist.
    /// `/app` and `/app/` are `index.html`.
    func response(path: String) -> HTTPResponse? {
        var name = String(path.dropFirst(Self.prefix.count))
        if name.hasPrefix("/") { name.removeFirst() }
        if name.isEmpty { name = "index.html" }
        guard Self.isPlainName(name), let ext = name.split(separator: ".").last.map(String.init),
            let type = Self.types[ext.lowercased()]
        else { return nil }
        let root = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        let file = URL(fileURLWithPath: root + "/" + name).resolvingSymlinksInPath().path
        guard file == root + "/" + name || file.hasPrefix(root + "/") && !file.dropFirst(root.count + 1).contains("/")
        else { return nil }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = (attributes[.size] as? NSNumber)?.intValue, size <= Self.maxFileBytes,
            let data = FileManager.default.contents(atPath: file)
        else { return nil }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)] + Self.securityHeaders, body: Array(data))
    }

    /// `[A-Za-z0-9][A-Za-z0-9._-]*`, at most 64 bytes, no `..`: a file directly in the directory.
    static func isPlainName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), !name.contains(".."), let first = name.utf8.first,
            isAlphanumeric(first)
        else {
            return false
        }
        return name.utf8.allSatisfy {
            isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
    }
}
