import ControlAPI
import Foundation
import Gateway
import Glibc
import TestSupport
import Testing

/// `make install` and `make deb` (packaging/) with the debug binary the suite already built:
/// nothing is compiled, the package is compressed with gzip -1, and every root is a scratch
/// folder (the maintainer scripts run with DPKG_ROOT, never against this machine).
@Suite(.timeLimit(.minutes(2)))
struct PackagingTests {
    static let binary = GatewayProcess.binary

    /// What the install puts under `prefix` (relative paths), the settings in `etc` and the
    /// units in `unitDir`: the binary, the dialer page, the examples as shipped, the man page,
    /// the gateway's unit and a cluster node's.
    static func expectedFiles(prefix: String, etc: String, unitDir: String) throws -> Set<String> {
        let page = Packaging.files(under: Packaging.repository.appendingPathComponent("web/app"))
        let profiles = Packaging.files(under: Packaging.repository.appendingPathComponent("sip-profiles"))
        var files: Set<String> = [
            "\(prefix)/bin/irisgw", "\(prefix)/share/irisgw/serve.json5", "\(prefix)/share/man/man1/irisgw.1.gz",
            "\(unitDir)/irisgw.service", "\(unitDir)/irisgw@.service", "\(etc)/irisgw/serve.json5"
        ]
        files.formUnion(page.map { "\(prefix)/share/irisgw/app/\($0)" })
        files.formUnion(profiles.map { "\(prefix)/share/irisgw/profiles/\($0)" })
        // The live profiles are the top-level examples; the suites are for `irisgw test`.
        files.formUnion(profiles.filter { !$0.contains("/") }.map { "\(etc)/irisgw/profiles/\($0)" })
        #expect(page.contains("index.html") && profiles.contains("carrier-sim.json5"))
        return files
    }

    @Test func makeInstallLaysOutTheBinaryPageProfilesManPageAndUnitAndKeepsEditedSettings() async throws {
        let destdir = try Packaging.scratch("install")
        defer { try? FileManager.default.removeItem(at: destdir) }
        let r = try await Packaging.make(["install", "DESTDIR=\(destdir.path)", "BINARY=\(Self.binary)"])
        #expect(r.status == 0, "\(r.output)")
        // BINARY given: nothing was built.
        #expect(!r.output.contains("Compiling") && !r.output.contains("Building"), "\(r.output)")
        let files = Packaging.files(under: destdir)
        let expected = try Self.expectedFiles(
            prefix: "usr/local", etc: "usr/local/etc", unitDir: "usr/local/lib/systemd/system")
        #expect(files == expected, "extra: \(files.subtracting(expected)), missing: \(expected.subtracting(files))")
        let root = destdir.path
        for file in files {
            #expect(Packaging.mode(root + "/" + file) == (file.hasSuffix("/bin/irisgw") ? 0o755 : 0o644), "\(file)")
        }
        for directory in ["usr/local/bin", "usr/local/share/irisgw/app", "usr/local/etc/irisgw/profiles"] {
            #expect(Packaging.mode(root + "/" + directory) == 0o755, "\(directory)")
        }
        let installed = root + "/usr/local/bin/irisgw"
        #expect(FileManager.default.contentsEqual(atPath: installed, andPath: Self.binary))

        // The unit runs the installed binary with the installed settings, which it can read.
        let unit = try String(contentsOfFile: root + "/usr/local/lib/systemd/system/irisgw.service", encoding: .utf8)
        #expect(
            Packaging.unitValue("ExecStart", in: unit)
                == "/usr/local/bin/irisgw serve --config /usr/local/etc/irisgw/serve.json5")
        #expect(Packaging.placeholder(in: unit) == nil, "a template placeholder is left: \(unit)")
        // A cluster node's unit, the instance its id, with the same paths.
        let node = try String(
            contentsOfFile: root + "/usr/local/lib/systemd/system/irisgw@.service", encoding: .utf8)
        #expect(
            Packaging.unitValue("ExecStart", in: node)
                == "/usr/local/bin/irisgw serve --config /usr/local/etc/irisgw/%i.json5")
        #expect(Packaging.placeholder(in: node) == nil, "a template placeholder is left: \(node)")
        let settingsFile = root + "/usr/local/etc/irisgw/serve.json5"
        let settings = try ServeConfiguration.load(file: URL(fileURLWithPath: settingsFile))
        #expect(settings.profiles == "/usr/local/etc/irisgw/profiles" && settings.dataDir == "/var/lib/irisgw")
        let drain = try #require(settings.drainTimeoutSec)
        let stop = try #require(Packaging.unitValue("TimeoutStopSec", in: unit).flatMap { Int($0) })
        #expect(stop > drain)
        // `serve --help` reads --config first: a file serve refuses fails here.
        let help = try await ChildProcess.run(installed, ["serve", "--config", settingsFile, "--help"])
        #expect(help.status == 0, "\(help.output)")
        let profiles = try ProfileLoader.loadDirectory(URL(fileURLWithPath: root + "/usr/local/etc/irisgw/profiles"))
        #expect(profiles.map(\.name).sorted() == ["carrier-sim", "example-ip-auth", "example-registration"])
        // The installed binary finds its dialer page on its own.
        let page = StaticFiles.locate(configured: nil, executable: installed)
        #expect(page?.directory == root + "/usr/local/share/irisgw/app")

        // The man page is the binary's own help, every command of it.
        let man = try await ChildProcess.run("/bin/gzip", ["-dc", root + "/usr/local/share/man/man1/irisgw.1.gz"])
        #expect(man.output.hasPrefix(".TH IRISGW 1"))
        let sections = [
            ".SS irisgw serve", ".SS irisgw carrier\\-sim", "\\-\\-drain\\-timeout S", "/usr/local/etc/irisgw"
        ]
        for text in sections { #expect(man.output.contains(text), "\(text)") }

        // A second install keeps the edited settings and says so.
        try ("// edited\n" + String(contentsOfFile: settingsFile, encoding: .utf8))
            .write(toFile: settingsFile, atomically: true, encoding: .utf8)
        let again = try await Packaging.make(["install", "DESTDIR=\(destdir.path)", "BINARY=\(Self.binary)"])
        #expect(again.status == 0 && again.output.contains("install: kept"), "\(again.output)")
        #expect(try String(contentsOfFile: settingsFile, encoding: .utf8).hasPrefix("// edited\n"))
    }

    @Test func makeInstallRefusesAMissingBinaryAndWritesNothing() async throws {
        let destdir = try Packaging.scratch("install-bad")
        defer { try? FileManager.default.removeItem(at: destdir) }
        let missing = destdir.path + "-no-such-binary"
        let r = try await Packaging.make(["install", "DESTDIR=\(destdir.path)", "BINARY=\(missing)"])
        #expect(r.status != 0)
        #expect(r.output.contains("install: \(missing) is not an executable file"), "\(r.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: destdir.path).isEmpty)
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: Packaging.systemdAnalyze),
            "needs systemd-analyze (Debian's systemd package; make deps installs it)"))
    func systemdAnalyzeVerifiesTheInstalledUnits() async throws {
        let destdir = try Packaging.scratch("install-unit")
        defer { try? FileManager.default.removeItem(at: destdir) }
        let r = try await Packaging.make(["install", "DESTDIR=\(destdir.path)", "BINARY=\(Self.binary)"])
        #expect(r.status == 0, "\(r.output)")
        let prefix = destdir.path + "/usr/local"
        let verify = try await Packaging.verify(
            units: ["irisgw.service", "irisgw@.service"].map {
                URL(fileURLWithPath: prefix + "/lib/systemd/system/" + $0)
            },
            replacing: ["/usr/local/bin/irisgw": prefix + "/bin/irisgw"], manPath: prefix + "/share/man")
        // Any warning (an unknown key, a bad value, no man page) is printed even when the status is 0.
        #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
    }
}
