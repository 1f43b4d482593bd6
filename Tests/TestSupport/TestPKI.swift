import Foundation

/// A small PKI for TLS tests (one copy for every test target: `TestSupport`), made with the `openssl` command in a temporary folder: a test
/// CA, certificates it issues (a server's with subjectAltName, a client's, an expired one)
/// and a second, untrusted CA. EC P-256 keys, so making them takes milliseconds; `openssl`
/// runs as a `ChildProcess`, awaited without holding a cooperative thread. `remove()`
/// (in a `defer`) deletes the folder. Nothing here is secret: the keys live for one test.
public final class TestPKI: @unchecked Sendable {
    public let directory: URL
    /// The trusted test CA's certificate (PEM).
    public let caFile: String

    public struct Issued: Sendable {
        public let certificate: String
        public let key: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public init(name: String = "test CA") async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-pki-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        caFile = directory.appendingPathComponent("ca.pem").path
        try await Self.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", path("ca.key"), "-out", caFile, "-days", "30", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
        ])
        try "".write(toFile: path("index.txt"), atomically: true, encoding: .utf8)
        try "01\n".write(toFile: path("serial"), atomically: true, encoding: .utf8)
        try """
        [ ca ]
        default_ca = test
        [ test ]
        database = \(path("index.txt"))
        new_certs_dir = \(directory.path)
        serial = \(path("serial"))
        default_md = sha256
        policy = anything
        unique_subject = no
        [ anything ]
        commonName = supplied

        """.write(toFile: path("ca.cnf"), atomically: true, encoding: .utf8)
    }

    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A certificate for `commonName` with these subjectAltName entries (`DNS:x`, `URI:sip:x`,
    /// `IP:127.0.0.1`; none: no subjectAltName at all), valid from now for 30 days, or over
    /// January 2020 when `expired`.
    public func issue(
        _ file: String, commonName: String, altNames: [String], expired: Bool = false
    ) async throws -> Issued {
        let key = path(file + ".key"), csr = path(file + ".csr"), cert = path(file + ".pem"), ext = path(file + ".ext")
        var extensions = "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n"
        if !altNames.isEmpty { extensions += "subjectAltName=" + altNames.joined(separator: ",") + "\n" }
        try extensions.write(toFile: ext, atomically: true, encoding: .utf8)
        try await Self.run([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", "/CN=\(commonName)"
        ])
        var args = [
            "ca", "-batch", "-config", path("ca.cnf"), "-cert", caFile, "-keyfile", path("ca.key"), "-in", csr,
            "-out", cert, "-extfile", ext, "-notext"
        ]
        args += expired ? ["-startdate", "20200101000000Z", "-enddate", "20200201000000Z"] : ["-days", "30"]
        try await Self.run(args)
        return Issued(certificate: cert, key: key)
    }

    public func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Runs `openssl` with `arguments`; throws with its output when it fails.
    public static func run(_ arguments: [String]) async throws {
        let result = try await ChildProcess.run("/usr/bin/openssl", arguments)
        guard result.status == 0 else {
            throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")): \(result.output)")
        }
    }
}
