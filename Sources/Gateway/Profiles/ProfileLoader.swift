import Formats
import Foundation
import Media
import SIP

/// Reads trunk profiles from JSON5 files (docs/sip-profiles.md).
///
/// A file is read into a `JSON5Value` tree, then checked key by key against the schema, so
/// every error names the file and the key path: unknown keys (with a suggestion), wrong
/// types, missing required keys and bad values.
public enum ProfileLoader {
    /// Loads one profile. The error's `file` is `file.relativePath` (the path as given).
    public static func load(file: URL) throws(ProfileError) -> TrunkProfile {
        let display = file.relativePath
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ProfileError(
                file: display, keyPath: "", message: "cannot read the file: \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ProfileError(file: display, keyPath: "", message: "the file is not UTF-8 text")
        }
        return try parse(text, file: display)
    }

    /// Loads every `*.json5` file of `dir` (not hidden ones, not subdirectories), in file name
    /// order. The first bad file stops loading. Two files with the same `name`, or a directory
    /// without profiles, are errors too.
    public static func loadDirectory(_ dir: URL) throws(ProfileError) -> [TrunkProfile] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        } catch {
            throw ProfileError(
                file: dir.relativePath, keyPath: "", message: "cannot list the directory: \(error.localizedDescription)"
            )
        }
        let files = names.filter { $0.hasSuffix(".json5") && !$0.hasPrefix(".") }.sorted()
        var profiles: [TrunkProfile] = []
        var fileByName: [String: String] = [:]
        var fileByInboundUser: [String: String] = [:]
        for name in files {
            let url = dir.appendingPathComponent(name, isDirectory: false)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                continue
            }
            let profile = try load(file: url)
            if let other = fileByName[profile.name] {
                throw ProfileError(
                    file: profile.source, keyPath: "name",
                    message: "duplicate profile name \"\(profile.name)\" (also in \(other))")
            }
            fileByName[profile.name] = profile.source
            // The username names the trunk an authenticated INVITE comes from.
            if let user = profile.inbound?.auth?.username {
                if let other = fileByInboundUser[user] {
                    throw ProfileError(
                        file: profile.source, keyPath: "inbound.auth.username",
                        message: "duplicate inbound username \"\(user)\" (also in \(other))")
                }
                fileByInboundUser[user] = profile.source
            }
            profiles.append(profile)
        }
        guard !profiles.isEmpty else {
            throw ProfileError(
                file: dir.relativePath, keyPath: "", message: "no trunk profiles (*.json5 files) in the directory")
        }
        return profiles
    }

    /// Parses the text of one profile; `file` is the name errors use.
    public static func parse(_ text: String, file: String) throws(ProfileError) -> TrunkProfile {
        try ProfileSchema(file: file).profile(try ProfileSchema.tree(text, file: file))
    }
}

/// The profile schema: which keys exist, their types, defaults and checks. Package-wide, so a
/// layer that owns keys of the serve file (ControlAPI's listener) reads them with the same errors.
package struct ProfileSchema {
    package let file: String

    package init(file: String) { self.file = file }

    /// Reads JSON5 text; a syntax error names the file, line and column.
    static func tree(_ text: String, file: String) throws(ProfileError) -> JSON5Value {
        do {
            return try JSON5Reader.parse(text)
        } catch {
            throw ProfileError(
                file: file, keyPath: error.keyPath, message: error.description, line: error.line, column: error.column)
        }
    }

    func profile(_ value: JSON5Value) throws(ProfileError) -> TrunkProfile {
        let root = try object(
            value, at: "", keys: ["name", "outbound", "inbound", "media", "sip", "transfer", "recording", "amd"])
        let name = try root.required("name") { (v, path) throws(ProfileError) in
            let s = try string(v, at: path)
            guard TrunkProfile.isValidName(s) else {
                throw fail(path, "must match [A-Za-z0-9_-]+, found \"\(s)\"")
            }
            return s
        }
        let outbound = try root.optional("outbound") { (v, path) throws(ProfileError) in try self.outbound(v, at: path)
        }
        let inbound = try root.optional("inbound") { (v, path) throws(ProfileError) in try self.inbound(v, at: path) }
        guard outbound != nil || inbound != nil else {
            throw fail("", "a profile needs an outbound section, an inbound section or both")
        }
        let media = try root.optional("media") { (v, path) throws(ProfileError) in try self.media(v, at: path) }
        let sip = try root.optional("sip") { (v, path) throws(ProfileError) in try self.sip(v, at: path) }
        if let media, media.encryption == .required, media.sdesRequiresTLS, let proxies = outbound?.proxies,
            (sip?.transport ?? .udp) != .tls,
            !proxies.contains(where: { $0.isTLS || ($0.transport == nil && $0.hostKind == .domainName) })
        {
            // No proxy could ever carry the keys: every outbound call would fail.
            throw fail(
                "media.encryption",
                "is required but no proxy is sips: or transport=tls, and SDES keys are sent only over TLS "
                    + "(set media.sdesRequiresTLS: false to send them over UDP or TCP)")
        }
        let transfer = try root.optional("transfer") { (v, path) throws(ProfileError) in
            try self.transfer(v, at: path)
        }
        if let transfer, transfer.refer != .reject || transfer.fallback == .bridge, outbound == nil {
            throw fail(
                "transfer", "dialling a transfer target needs an outbound section (its number rules and limits)")
        }
        var profile = TrunkProfile(
            name: name, outbound: outbound, inbound: inbound,
            media: media ?? TrunkProfile.MediaSettings(), sip: sip ?? TrunkProfile.SIPSettings(),
            source: file)
        profile.transfer = transfer ?? TrunkProfile.Transfer()
        profile.recording =
            try root.optional("recording") { (v, path) throws(ProfileError) in try self.recording(v, at: path) }
            ?? TrunkProfile.Recording()
        profile.amd =
            try root.optional("amd") { (v, path) throws(ProfileError) in try self.amd(v, at: path) } ?? AMDSettings()
        return profile
    }

    private func transfer(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.Transfer {
        let o = try object(
            value, at: path,
            keys: ["fallback", "refer", "notifyTimeoutSec", "completeTimeoutSec", "answerTimeoutSec"])
        let d = TrunkProfile.Transfer()
        func seconds(_ key: String, _ range: ClosedRange<Int>) throws(ProfileError) -> Int? {
            try o.optional(key) { (v, p) throws(ProfileError) in try int(v, at: p, in: range) }
        }
        return TrunkProfile.Transfer(
            fallback: try o.optional("fallback") { (v, p) throws(ProfileError) in
                try choice(v, at: p, TrunkProfile.Transfer.Fallback.self)
            } ?? d.fallback,
            refer: try o.optional("refer") { (v, p) throws(ProfileError) in
                try choice(v, at: p, TrunkProfile.Transfer.InboundRefer.self)
            } ?? d.refer,
            notifyTimeoutSec: try seconds("notifyTimeoutSec", 1...120) ?? d.notifyTimeoutSec,
            completeTimeoutSec: try seconds("completeTimeoutSec", 5...600) ?? d.completeTimeoutSec,
            answerTimeoutSec: try seconds("answerTimeoutSec", 1...300) ?? d.answerTimeoutSec)
    }

    // MARK: Sections

    private func outbound(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.Outbound {
        let o = try object(
            value, at: path,
            keys: [
                "proxies", "fromDomain", "auth", "register", "numberFormat", "defaultCountryCode", "nationalPrefix",
                "internationalPrefix", "allowedPrefixes", "maxConcurrentCalls", "callsPerSecond", "ringTimeoutSec",
                "failoverTimeoutMs"
            ] + Self.carrierPolicyKeys)
        let proxies = try o.required("proxies") { (v, p) throws(ProfileError) in
            try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let text = try string(e, at: ep)
                do throws(ProxyAddressError) { return try ProxyAddress(parsing: text) } catch {
                    throw fail(ep, error.description)
                }
            }
        }
        let fromDomain = try o.optional("fromDomain") { (v, p) throws(ProfileError) in
            let s = try string(v, at: p)
            let bracketed =
                s.hasPrefix("[") && s.hasSuffix("]") && IPAddressBytes.parse(String(s.dropFirst().dropLast())) != nil
            guard bracketed || IPAddressBytes.parse(s)?.count == 4 || hostnameProblem(Substring(s)) == nil else {
                throw fail(p, "not a host name or IP address: \"\(s)\"")
            }
            return s
        }
        let auth = try o.optional("auth") { (v, p) throws(ProfileError) in
            let a = try object(v, at: p, keys: ["username", "passwordEnv"])
            let username = try a.required("username") { (v, p) throws(ProfileError) in
                let s = try string(v, at: p)
                guard !s.isEmpty else { throw fail(p, "must not be empty") }
                return s
            }
            let passwordEnv = try a.required("passwordEnv") { (v, p) throws(ProfileError) in
                try environmentName(v, at: p)
            }
            return TrunkProfile.Outbound.Auth(username: username, passwordEnv: passwordEnv, source: file)
        }
        let register = try o.optional("register") { (v, p) throws(ProfileError) in
            let r = try object(v, at: p, keys: ["enabled", "expiresSec"])
            let enabled = try r.optional("enabled") { (v, p) throws(ProfileError) in try bool(v, at: p) }
            let expires = try r.optional("expiresSec") { (v, p) throws(ProfileError) in
                try int(v, at: p, in: 60...86400)
            }
            return TrunkProfile.Outbound.Register(enabled: enabled ?? false, expiresSec: expires ?? 3600)
        }
        let numberFormat = try o.optional("numberFormat") { (v, p) throws(ProfileError) in
            try choice(v, at: p, TrunkProfile.Outbound.NumberFormat.self)
        }
        let countryCode =
            try o.optional("defaultCountryCode") { (v, p) throws(ProfileError) in
                let s = try string(v, at: p)
                guard (1...3).contains(s.count), s.first != "0", s.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw fail(
                        p, "must be a country calling code of 1 to 3 digits without + (\"1\", \"44\"), found \"\(s)\"")
                }
                return s
            } ?? "1"
        let nationalPrefix = try o.optional("nationalPrefix") { (v, p) throws(ProfileError) in
            try digits(v, at: p, allowEmpty: true)
        }
        let internationalPrefix = try o.optional("internationalPrefix") { (v, p) throws(ProfileError) in
            try digits(v, at: p, allowEmpty: false)
        }
        let allowedPrefixes = try o.optional("allowedPrefixes") { (v, p) throws(ProfileError) in
            try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let s = try string(e, at: ep)
                var rest = Substring(s)
                if rest.first == "+" || rest.first == "*" { rest = rest.dropFirst() }
                guard !s.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw fail(ep, "a prefix is an optional + or * and digits (\"+1\", \"+4420\"), found \"\(s)\"")
                }
                return s
            }
        }
        let maxCalls = try o.optional("maxConcurrentCalls") { (v, p) throws(ProfileError) in
            try int(v, at: p, in: 1...100_000)
        }
        let cps = try o.optional("callsPerSecond") { (v, p) throws(ProfileError) in try int(v, at: p, in: 1...10_000) }
        let ring = try o.optional("ringTimeoutSec") { (v, p) throws(ProfileError) in try int(v, at: p, in: 1...600) }
        let failover = try o.optional("failoverTimeoutMs") { (v, p) throws(ProfileError) in
            let ms = try int(v, at: p, in: 0...31_000)
            // Under 500 ms a live target's 100 Trying may not be back yet (T1 is 500 ms).
            guard ms == 0 || ms >= 500 else {
                throw fail(p, "must be 0 (Timer B only) or from 500 to 31000, found \(ms)")
            }
            return ms
        }
        var outbound = TrunkProfile.Outbound(
            proxies: proxies, fromDomain: fromDomain, auth: auth, register: register ?? .init(),
            numberFormat: numberFormat ?? .e164, defaultCountryCode: countryCode, nationalPrefix: nationalPrefix,
            internationalPrefix: internationalPrefix, allowedPrefixes: allowedPrefixes,
            maxConcurrentCalls: maxCalls ?? 100, callsPerSecond: cps ?? 10, ringTimeoutSec: ring ?? 60,
            failoverTimeoutMs: failover ?? 4000)
        try carrierPolicy(o, into: &outbound)
        return outbound
    }

    /// A non-empty array of addresses or CIDR networks (`allowFrom`, `sip.trustedProxies`).
    func networks(_ value: JSON5Value, at path: String) throws(ProfileError) -> [CIDR] {
        try nonEmptyArray(value, at: path) { (e, ep) throws(ProfileError) in
            let text = try string(e, at: ep)
            do throws(CIDRError) { return try CIDR(parsing: text) } catch { throw fail(ep, error.description) }
        }
    }

    private func inbound(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.Inbound {
        let o = try object(
            value, at: path,
            keys: ["allowFrom", "routes", "ringTimeoutSec", "maxConcurrentCalls", "callsPerSecond", "auth"])
        let allowFrom = try o.optional("allowFrom") { (v, p) throws(ProfileError) in try networks(v, at: p) }
        let routes = try o.required("routes") { (v, p) throws(ProfileError) in
            var seen: [String: Int] = [:]
            return try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let r = try object(e, at: ep, keys: ["did", "routingId"])
                let did = try r.required("did") { (v, p) throws(ProfileError) in
                    let s = try string(v, at: p)
                    let digits = s.dropFirst()
                    let isE164 =
                        s.hasPrefix("+") && (2...15).contains(digits.count) && digits.first != "0"
                        && digits.allSatisfy { $0.isASCII && $0.isNumber }
                    guard s == "*" || isE164 else {
                        throw fail(p, "must be an E.164 number (\"+15550001000\") or \"*\", found \"\(s)\"")
                    }
                    if let first = seen[s] { throw fail(p, "duplicate did \"\(s)\" (also \(path).routes[\(first)])") }
                    if case .index(let i) = lastIndex(ep) { seen[s] = i }
                    return s
                }
                let routingId = try r.required("routingId") { (v, p) throws(ProfileError) in
                    let s = try string(v, at: p)
                    guard (1...128).contains(s.count),
                        s.allSatisfy({
                            $0.isASCII && !$0.isWhitespace && $0.asciiValue.map { $0 > 0x20 && $0 < 0x7F } == true
                        })
                    else {
                        throw fail(p, "must be 1 to 128 printable ASCII characters without spaces, found \"\(s)\"")
                    }
                    return s
                }
                return TrunkProfile.Inbound.Route(did: did, routingId: routingId)
            }
        }
        let ring = try o.optional("ringTimeoutSec") { (v, p) throws(ProfileError) in try int(v, at: p, in: 1...600) }
        let maxCalls = try o.optional("maxConcurrentCalls") { (v, p) throws(ProfileError) in
            try int(v, at: p, in: 1...100_000)
        }
        let cps = try o.optional("callsPerSecond") { (v, p) throws(ProfileError) in try int(v, at: p, in: 1...10_000) }
        let auth = try o.optional("auth") { (v, p) throws(ProfileError) in try inboundAuth(v, at: p) }
        return TrunkProfile.Inbound(
            allowFrom: allowFrom, routes: routes, ringTimeoutSec: ring ?? 45,
            maxConcurrentCalls: maxCalls ?? 100, callsPerSecond: cps ?? 10, auth: auth)
    }

    private func media(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.MediaSettings {
        let o = try object(
            value, at: path,
            keys: [
                "codecs", "dtmf", "rtpTimeoutSec", "advertise", "encryption", "srtpSuites", "sdesRequiresTLS",
                "opus", "opusTrunk"
            ])
        let codecs = try o.optional("codecs") { (v, p) throws(ProfileError) in
            var seen = Set<TrunkProfile.MediaSettings.Codec>()
            return try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let codec = try choice(e, at: ep, TrunkProfile.MediaSettings.Codec.self)
                guard seen.insert(codec).inserted else { throw fail(ep, "\(codec.rawValue) is listed twice") }
                return codec
            }
        }
        let dtmf = try o.optional("dtmf") { (v, p) throws(ProfileError) in
            try choice(v, at: p, TrunkProfile.MediaSettings.DTMFMode.self)
        }
        let rtpTimeout = try o.optional("rtpTimeoutSec") { (v, p) throws(ProfileError) in
            let n = try int(v, at: p, in: 0...3600)
            guard n == 0 || n >= 5 else { throw fail(p, "must be 0 (disabled) or from 5 to 3600, found \(n)") }
            return n
        }
        let advertise = try o.optional("advertise") { (v, p) throws(ProfileError) in try numericHost(v, at: p) }
        let encryption = try o.optional("encryption") { (v, p) throws(ProfileError) in
            try choice(v, at: p, TrunkProfile.MediaSettings.Encryption.self)
        }
        let suites = try o.optional("srtpSuites") { (v, p) throws(ProfileError) in
            var seen = Set<SRTPSuite>()
            return try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let suite = try choice(e, at: ep, SRTPSuite.self)
                guard seen.insert(suite).inserted else { throw fail(ep, "\(suite.rawValue) is listed twice") }
                return suite
            }
        }
        let sdesRequiresTLS = try o.optional("sdesRequiresTLS") { (v, p) throws(ProfileError) in try bool(v, at: p) }
        let opus = try o.optional("opus") { (v, p) throws(ProfileError) in try opusOverrides(v, at: p) }
        let opusTrunk = try o.optional("opusTrunk") { (v, p) throws(ProfileError) in try opusTrunkFormat(v, at: p) }
        return TrunkProfile.MediaSettings(
            codecs: codecs ?? [.pcmu, .pcma], dtmf: dtmf ?? .rfc4733,
            rtpTimeoutSec: rtpTimeout ?? 30, advertise: advertise,
            encryption: encryption ?? .none, srtpSuites: suites ?? SRTPSuite.allCases,
            sdesRequiresTLS: sdesRequiresTLS ?? true, opus: opus ?? .init(),
            opusTrunk: opusTrunk ?? TrunkProfile.MediaSettings.defaultOpusTrunk)
    }

    private func sip(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.SIPSettings {
        let o = try object(
            value, at: path, keys: ["transport", "prack", "sessionTimerSec", "optionsPingSec", "advertise", "tls"])
        let transport = try o.optional("transport") { (v, p) throws(ProfileError) in
            try choice(v, at: p, ProxyAddress.Transport.self)
        }
        let prack = try o.optional("prack") { (v, p) throws(ProfileError) in
            try choice(v, at: p, TrunkProfile.SIPSettings.PRACKMode.self)
        }
        let sessionTimer = try o.optional("sessionTimerSec") { (v, p) throws(ProfileError) in
            let n = try int(v, at: p, in: 0...86400)
            // RFC 4028 section 4: Session-Expires below 90 seconds is not allowed (Min-SE floor).
            guard n == 0 || n >= 90 else { throw fail(p, "must be 0 (disabled) or at least 90 (RFC 4028), found \(n)") }
            return n
        }
        let ping = try o.optional("optionsPingSec") { (v, p) throws(ProfileError) in
            let n = try int(v, at: p, in: 0...3600)
            guard n == 0 || n >= 5 else { throw fail(p, "must be 0 (disabled) or from 5 to 3600, found \(n)") }
            return n
        }
        let advertise = try o.optional("advertise") { (v, p) throws(ProfileError) in try advertisedAddress(v, at: p) }
        let tls = try o.optional("tls") { (v, p) throws(ProfileError) in try self.tls(v, at: p) }
        return TrunkProfile.SIPSettings(
            transport: transport ?? .udp, prack: prack ?? .supported,
            sessionTimerSec: sessionTimer ?? 1800, optionsPingSec: ping ?? 30, advertise: advertise,
            tls: tls ?? .init())
    }

    /// `sip.tls`: file paths as given (relative ones from the gateway's working directory;
    /// the files are read when the gateway starts), a server name, the wildcard switch.
    private func tls(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.SIPSettings.TLSSettings
    {
        let o = try object(
            value, at: path, keys: ["caFile", "serverName", "certificateFile", "keyFile", "allowWildcardCertificates"])
        func file(_ key: String) throws(ProfileError) -> String? {
            try o.optional(key) { (v, p) throws(ProfileError) in
                let s = try string(v, at: p)
                guard !s.isEmpty, !s.utf8.contains(0) else { throw fail(p, "must be a file path") }
                return s
            }
        }
        var t = TrunkProfile.SIPSettings.TLSSettings()
        t.caFile = try file("caFile")
        t.certificateFile = try file("certificateFile")
        t.keyFile = try file("keyFile")
        t.serverName = try o.optional("serverName") { (v, p) throws(ProfileError) in
            let s = try string(v, at: p)
            guard SocketAddress.isNumericHost(s) || hostnameProblem(Substring(s)) == nil else {
                throw fail(p, "not a host name or IP address: \"\(s)\"")
            }
            return s.lowercased()
        }
        t.allowWildcardCertificates =
            try o.optional("allowWildcardCertificates") { (v, p) throws(ProfileError) in try bool(v, at: p) } ?? false
        if t.certificateFile != nil && t.keyFile == nil {
            throw fail(path + ".keyFile", "missing: certificateFile needs its keyFile")
        }
        if t.keyFile != nil && t.certificateFile == nil {
            throw fail(path + ".certificateFile", "missing: keyFile needs its certificateFile")
        }
        return t
    }

    // MARK: Typed readers

    /// A numeric IPv4 or IPv6 address (an SDP `c=` line wants one; names are not resolved there).
    func numericHost(_ value: JSON5Value, at path: String) throws(ProfileError) -> String {
        let s = try string(value, at: path)
        guard SocketAddress.isNumericHost(s) else {
            throw fail(path, "must be a numeric IPv4 or IPv6 address, found \"\(s)\"")
        }
        return s
    }

    /// `HOST`, `HOST:PORT` or `[V6]:PORT`: an address we name ourselves by in SIP.
    func advertisedAddress(_ value: JSON5Value, at path: String) throws(ProfileError) -> SIPAdvertisedAddress {
        let s = try string(value, at: path)
        guard let a = SIPAdvertisedAddress.parse(s) else {
            throw fail(path, "must be HOST, HOST:PORT or [IPV6]:PORT (port 1-65535), found \"\(s)\"")
        }
        return a
    }

    package func fail(_ path: String, _ message: String) -> ProfileError {
        ProfileError(file: file, keyPath: path, message: message)
    }

    func typeError(_ path: String, expected: String, found value: JSON5Value) -> ProfileError {
        fail(path, "expected \(expected), found \(value.kindDescription)")
    }

    /// An object whose keys are all in `keys`; unknown keys fail first, in document order,
    /// so a misspelt required key reads "unknown key", not "missing".
    package func object(_ value: JSON5Value, at path: String, keys: [String]) throws(ProfileError) -> ObjectFields {
        guard case .object(let members) = value else { throw typeError(path, expected: "an object", found: value) }
        for member in members where !keys.contains(member.key) {
            let hint =
                suggestion(for: member.key, among: keys).map { "did you mean \($0)?" }
                ?? "allowed: " + keys.joined(separator: ", ")
            throw fail(join(path, member.key), "unknown key (\(hint))")
        }
        return ObjectFields(schema: self, path: path, members: members)
    }

    package func string(_ value: JSON5Value, at path: String) throws(ProfileError) -> String {
        guard case .string(let s) = value else { throw typeError(path, expected: "a string", found: value) }
        return s
    }

    func bool(_ value: JSON5Value, at path: String) throws(ProfileError) -> Bool {
        guard case .bool(let b) = value else { throw typeError(path, expected: "true or false", found: value) }
        return b
    }

    package func int(_ value: JSON5Value, at path: String, in range: ClosedRange<Int>) throws(ProfileError) -> Int {
        let n: Int
        switch value {
        case .integer(let i): n = i
        case .number(let d) where d.rounded() == d && abs(d) < 1e15: n = Int(d)
        default: throw typeError(path, expected: "an integer", found: value)
        }
        guard range.contains(n) else {
            throw fail(path, "must be from \(range.lowerBound) to \(range.upperBound), found \(n)")
        }
        return n
    }

    private func digits(_ value: JSON5Value, at path: String, allowEmpty: Bool) throws(ProfileError) -> String {
        let s = try string(value, at: path)
        guard (allowEmpty || !s.isEmpty), s.count <= 4, s.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw fail(path, "must be \(allowEmpty ? "0" : "1") to 4 digits, found \"\(s)\"")
        }
        return s
    }

    package func choice<E: RawRepresentable & CaseIterable>(
        _ value: JSON5Value, at path: String, _ type: E.Type
    ) throws(ProfileError) -> E where E.RawValue == String {
        let options = E.allCases.map(\.rawValue)
        guard case .string(let s) = value else {
            throw typeError(
                path, expected: "one of " + options.map { "\"\($0)\"" }.joined(separator: ", "), found: value)
        }
        guard let parsed = E(rawValue: s) else {
            throw fail(
                path, "must be one of " + options.map { "\"\($0)\"" }.joined(separator: ", ") + ", found \"\(s)\"")
        }
        return parsed
    }

    func nonEmptyArray<T>(
        _ value: JSON5Value, at path: String, _ element: (JSON5Value, String) throws(ProfileError) -> T
    ) throws(ProfileError) -> [T] {
        guard case .array(let items) = value else { throw typeError(path, expected: "an array", found: value) }
        guard !items.isEmpty else { throw fail(path, "must not be empty") }
        var out: [T] = []
        for (i, item) in items.enumerated() {
            out.append(try element(item, "\(path)[\(i)]"))
        }
        return out
    }

    private enum PathEnd { case index(Int), other }

    /// The index at the end of an element path like `inbound.routes[3]`.
    private func lastIndex(_ path: String) -> PathEnd {
        guard path.hasSuffix("]"), let open = path.lastIndex(of: "["),
            let i = Int(path[path.index(after: open)..<path.index(before: path.endIndex)])
        else { return .other }
        return .index(i)
    }

    /// The allowed key closest to a misspelt one: same letters ignoring case, or at most two edits.
    private func suggestion(for key: String, among keys: [String]) -> String? {
        if let same = keys.first(where: { $0.lowercased() == key.lowercased() }) { return same }
        let scored = keys.map { ($0, editDistance(Array($0.lowercased()), Array(key.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2, best.1 < key.count else { return nil }
        return best.0
    }

    /// The object being read: required and optional keys by name.
    package struct ObjectFields {
        package let schema: ProfileSchema
        package let path: String
        package let members: [JSON5Member]

        func required<T>(
            _ key: String, _ read: (JSON5Value, String) throws(ProfileError) -> T
        ) throws(ProfileError) -> T {
            let keyPath = join(path, key)
            guard let member = members.first(where: { $0.key == key }) else {
                throw schema.fail(keyPath, "missing required key")
            }
            return try read(member.value, keyPath)
        }

        package func optional<T>(
            _ key: String, _ read: (JSON5Value, String) throws(ProfileError) -> T
        ) throws(ProfileError) -> T? {
            guard let member = members.first(where: { $0.key == key }) else { return nil }
            return try read(member.value, join(path, key))
        }
    }
}

private func join(_ path: String, _ key: String) -> String {
    path.isEmpty ? key : path + "." + key
}

private func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    var previous = Array(0...b.count)
    for (i, ca) in a.enumerated() {
        var current = [i + 1]
        for (j, cb) in b.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
        }
        previous = current
    }
    return previous[b.count]
}
