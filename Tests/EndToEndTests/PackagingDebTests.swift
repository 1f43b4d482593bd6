import Foundation
import Gateway
import Glibc
import TestSupport
import Testing

extension PackagingTests {
    /// The fields of `dpkg-deb -f DEB`.
    static func controlFields(_ deb: String) async throws -> [String: String] {
        let r = try await ChildProcess.run("/usr/bin/dpkg-deb", ["-f", deb])
        var fields: [String: String] = [:]
        for line in r.output.split(separator: "\n") where !line.hasPrefix(" ") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    /// Minimal account files for a scratch root, as useradd --prefix wants them.
    static func seedAccounts(_ root: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        let files = [
            "passwd": "root:x:0:0:root:/root:/bin/sh\n", "group": "root:x:0:\n",
            "shadow": "root:*:19000:0:99999:7:::\n",
            "gshadow": "root:*::\n"
        ]
        for (name, text) in files { try text.write(toFile: root + "/etc/" + name, atomically: true, encoding: .utf8) }
    }

    @Test func makeDebBuildsThePackageWithItsFilesConffilesControlAndScripts() async throws {
        let work = try Packaging.scratch("deb")
        defer { try? FileManager.default.removeItem(at: work) }
        let out = work.path + "/out"
        let built = try await Packaging.make(
            ["deb", "BINARY=\(Self.binary)", "DEB_DIR=\(out)"],
            environment: ["DEB_COMPRESS": "gzip", "DEB_COMPRESS_LEVEL": "1", "IRISGW_DEB_ALLOW_UNPACKAGED": "1"])
        #expect(built.status == 0, "\(built.output)")
        // The debug binary takes Swift's runtime from /opt/swift: let through, and said.
        #expect(built.output.contains("libswiftCore.so"), "\(built.output)")
        let version = try await ChildProcess.run(Self.binary, ["version"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let arch = try await ChildProcess.run("/usr/bin/dpkg", ["--print-architecture"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let deb = "\(out)/irisgw_\(version.dropFirst("irisgw ".count))_\(arch).deb"
        #expect(FileManager.default.fileExists(atPath: deb), "\(built.output)")

        let fields = try await Self.controlFields(deb)
        #expect(fields["Package"] == "irisgw" && fields["Architecture"] == arch)
        #expect(fields["Version"].map { "irisgw " + $0 } == version)
        let depends = Set(
            (fields["Depends"] ?? "").split(separator: ",").map {
                String($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
            })
        // The C libraries the binary links (DT_NEEDED), by their Debian packages.
        for package in [
            "libc6", "libosip2-15", "libopus0", "libspandsp2", "libssl3", "libsqlite3-0", "libc-ares2", "libsrtp2-1",
            "liburing2", "libhiredis0.14", "libpq5", "passwd"
        ] {
            #expect(depends.contains(package), "\(package) not in \(fields["Depends"] ?? "")")
        }
        #expect(!depends.contains { $0.contains("swift") }, "\(depends)")

        let root = work.path + "/root"
        let control = work.path + "/control"
        for (flag, folder) in [("-x", root), ("-e", control)] {
            let r = try await ChildProcess.run("/usr/bin/dpkg-deb", [flag, deb, folder])
            #expect(r.status == 0, "\(r.output)")
        }
        let files = Packaging.files(under: URL(fileURLWithPath: root))
        let expected = try Self.expectedFiles(prefix: "usr", etc: "etc", unitDir: "lib/systemd/system")
        #expect(files == expected, "extra: \(files.subtracting(expected)), missing: \(expected.subtracting(files))")
        for file in files {
            #expect(Packaging.mode(root + "/" + file) == (file == "usr/bin/irisgw" ? 0o755 : 0o644), "\(file)")
        }
        let listing = try await ChildProcess.run("/usr/bin/dpkg-deb", ["-c", deb]).output
        #expect(listing.split(separator: "\n").allSatisfy { $0.contains(" root/root ") }, "\(listing)")
        // postinst makes it, with the user it creates.
        #expect(!listing.contains("./var/lib/irisgw"))
        let conffiles = try String(contentsOfFile: control + "/conffiles", encoding: .utf8)
        #expect(conffiles == files.filter { $0.hasPrefix("etc/") }.sorted().map { "/\($0)\n" }.joined())
        for script in ["postinst", "prerm", "postrm"] {
            #expect(Packaging.mode(control + "/" + script) == 0o755, "\(script)")
        }
        let unit = try String(contentsOfFile: root + "/lib/systemd/system/irisgw.service", encoding: .utf8)
        #expect(Packaging.unitValue("ExecStart", in: unit) == "/usr/bin/irisgw serve --config /etc/irisgw/serve.json5")
        // The shell's kill: /bin/kill (procps) is not on a minimal Debian (make try-package found it).
        #expect(Packaging.unitValue("ExecReload", in: unit) == "/bin/sh -c 'kill -HUP \"$MAINPID\"'")
        let node = try String(contentsOfFile: root + "/lib/systemd/system/irisgw@.service", encoding: .utf8)
        #expect(Packaging.unitValue("ExecStart", in: node) == "/usr/bin/irisgw serve --config /etc/irisgw/%i.json5")
        let settings = try ServeConfiguration.load(file: URL(fileURLWithPath: root + "/etc/irisgw/serve.json5"))
        #expect(settings.profiles == "/etc/irisgw/profiles")
        // Stripped, it still runs.
        let packaged = try await ChildProcess.run(root + "/usr/bin/irisgw", ["version"])
        #expect(packaged.status == 0 && packaged.output.hasPrefix(version), "\(packaged.output)")

        if FileManager.default.isExecutableFile(atPath: Packaging.systemdAnalyze) {
            let verify = try await Packaging.verify(
                units: ["irisgw.service", "irisgw@.service"].map {
                    URL(fileURLWithPath: root + "/lib/systemd/system/" + $0)
                },
                replacing: ["/usr/bin/irisgw": root + "/usr/bin/irisgw"], manPath: root + "/usr/share/man")
            #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
        }
        try await Self.checkMaintainerScripts(root: root, control: control)
    }

    /// postinst and postrm against the extracted package as a root of its own (DPKG_ROOT):
    /// the user, /var/lib/irisgw 0700 and theirs, nothing enabled unless the flag file is
    /// there, nothing of this machine's accounts touched. useradd and chown need root.
    static func checkMaintainerScripts(root: String, control: String) async throws {
        guard getuid() == 0 else {
            print("PackagingTests: not root, so the maintainer scripts are not run (useradd and chown need root)")
            return
        }
        try seedAccounts(root)
        let hostAccounts = try ["/etc/passwd", "/etc/group"].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        var environment = ProcessInfo.processInfo.environment
        environment["DPKG_ROOT"] = root
        environment["IRISGW_ENABLE"] = nil
        let link = root + "/etc/systemd/system/multi-user.target.wants/irisgw.service"

        let first = try await ChildProcess.run(
            "/bin/sh", [control + "/postinst", "configure"], environment: environment)
        #expect(first.status == 0, "\(first.output)")
        let passwd = try String(contentsOfFile: root + "/etc/passwd", encoding: .utf8)
        let entry = try #require(passwd.split(separator: "\n").first { $0.hasPrefix("irisgw:") }, "\(passwd)")
        let fields = entry.split(separator: ":", omittingEmptySubsequences: false)
        #expect(fields.count == 7 && fields[5] == "/var/lib/irisgw" && fields[6] == "/usr/sbin/nologin", "\(entry)")
        #expect(try String(contentsOfFile: root + "/etc/group", encoding: .utf8).contains("\nirisgw:"))
        let data = root + "/var/lib/irisgw"
        #expect(Packaging.mode(data) == 0o700)
        let owner = try #require(Packaging.owner(data))
        #expect("\(owner.uid)" == fields[2] && "\(owner.gid)" == fields[3], "\(entry)")
        #expect(Packaging.mode(link) == nil, "enabled without being asked")

        // Asked by the flag file: enabled (systemctl --root), and the user is not made twice.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemctl")
            || FileManager.default.isExecutableFile(atPath: "/bin/systemctl")
        {
            FileManager.default.createFile(atPath: root + "/etc/irisgw/enable-on-install", contents: Data())
            let second = try await ChildProcess.run(
                "/bin/sh", [control + "/postinst", "configure"], environment: environment)
            #expect(second.status == 0, "\(second.output)")
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: link))
                    == "/lib/systemd/system/irisgw.service")
            let users = try String(contentsOfFile: root + "/etc/passwd", encoding: .utf8).split(separator: "\n")
            #expect(users.filter { $0.hasPrefix("irisgw:") }.count == 1)
            // A cluster node enabled by hand (systemctl enable irisgw@gw1): the purge takes its link too.
            let nodeLink = root + "/etc/systemd/system/multi-user.target.wants/irisgw@gw1.service"
            try FileManager.default.createSymbolicLink(
                atPath: nodeLink, withDestinationPath: "/lib/systemd/system/irisgw@.service")
            let purge = try await ChildProcess.run("/bin/sh", [control + "/postrm", "purge"], environment: environment)
            #expect(purge.status == 0, "\(purge.output)")
            #expect(Packaging.mode(link) == nil && Packaging.mode(root + "/etc/irisgw/enable-on-install") == nil)
            #expect(Packaging.mode(nodeLink) == nil, "the node's enablement link is left")
        }
        let after = try ["/etc/passwd", "/etc/group"].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        #expect(after == hostAccounts, "this machine's accounts changed")
    }
}
