import Foundation
import TestSupport
import Testing

@testable import TLS

/// The generated certificate and its SDP fingerprint, checked against `/usr/bin/openssl`.
@Suite struct DTLSCertificateTests {
    /// Runs openssl on the certificate's PEM (a `ChildProcess`, awaited); its standard output.
    static func openssl(_ arguments: [String], pem: String) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-dtls-\(UUID().uuidString.prefix(8)).pem")
        try pem.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await ChildProcess.run(
            "/usr/bin/openssl", arguments + ["-in", file.path], discardingErrors: true)
        #expect(result.status == 0)
        return result.output
    }

    /// "sha256 Fingerprint=AB:CD:..." -> "AB:CD:...".
    static func digest(_ line: String) -> String {
        String(line.split(separator: "=", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func fingerprintMatchesOpenSSL() async throws {
        let certificate = try DTLSCertificate()
        let sha256 = try await Self.openssl(["x509", "-noout", "-fingerprint", "-sha256"], pem: certificate.pem)
        #expect(Self.digest(sha256) == certificate.fingerprint.hex)
        #expect(certificate.fingerprint.sdpValue == "sha-256 " + Self.digest(sha256))
        #expect(certificate.fingerprint.hex.count == 32 * 3 - 1)
        for (algorithm, flag) in [(DTLSFingerprint.Algorithm.sha1, "-sha1"), (.sha384, "-sha384"), (.sha512, "-sha512")]
        {
            let line = try await Self.openssl(["x509", "-noout", "-fingerprint", flag], pem: certificate.pem)
            #expect(Self.digest(line) == certificate.fingerprint(algorithm).hex)
        }
    }

    @Test func certificateIsSelfSignedP256() async throws {
        let certificate = try DTLSCertificate()
        #expect(certificate.pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(!certificate.pem.contains("PRIVATE KEY"))
        let text = try await Self.openssl(["x509", "-noout", "-text"], pem: certificate.pem)
        #expect(text.contains("Subject: CN = irisgw") && text.contains("Issuer: CN = irisgw"))
        #expect(text.contains("prime256v1") || text.contains("P-256"))
        #expect(text.contains("ecdsa-with-SHA256"))
        // Valid now, for about 30 days.
        let check = try await Self.openssl(["x509", "-noout", "-checkend", "\(29 * 86_400)"], pem: certificate.pem)
        #expect(check.contains("will not expire"))
        // A random serial: two certificates differ.
        let other = try DTLSCertificate()
        var serials: [String] = []
        for c in [certificate, other] {
            serials.append(try await Self.openssl(["x509", "-noout", "-serial"], pem: c.pem))
        }
        #expect(serials[0] != serials[1])
        #expect(certificate.fingerprint != other.fingerprint)
    }

    @Test func sdpFingerprintParsing() throws {
        let certificate = try DTLSCertificate()
        let value = certificate.fingerprint.sdpValue
        #expect(DTLSFingerprint(sdp: value) == certificate.fingerprint)
        // Hash name and hex in any case (RFC 8122 §5).
        #expect(DTLSFingerprint(sdp: value.uppercased()) == certificate.fingerprint)
        #expect(DTLSFingerprint(sdp: value.lowercased()) == certificate.fingerprint)
        #expect(DTLSFingerprint(sdp: "sha-256 AB:CD") == nil)  // wrong length
        #expect(DTLSFingerprint(sdp: "md5 " + certificate.fingerprint.hex) == nil)
        #expect(DTLSFingerprint(sdp: "sha-256") == nil)
        #expect(
            DTLSFingerprint(sdp: "sha-256 " + certificate.fingerprint.hex.replacingOccurrences(of: ":", with: ""))
                == nil)
        #expect(DTLSFingerprint(sdp: "sha-256 " + certificate.fingerprint.hex + ":") == nil)
        #expect(
            DTLSFingerprint(sdp: "sha-256 " + certificate.fingerprint.hex.replacingOccurrences(of: "A", with: "G"))
                == nil
                || !certificate.fingerprint.hex.contains("A"))
        let one = try #require(
            DTLSFingerprint(sdp: "sha-1 " + Array(repeating: "0F", count: 20).joined(separator: ":")))
        #expect(one.algorithm == .sha1 && one.digest == [UInt8](repeating: 0x0F, count: 20))
    }

    @Test func profilesMapToSRTPSuiteNames() {
        // The raw values of Media's SRTPSuite (the TLS module cannot import Media).
        #expect(DTLSSRTPProfile.aeadAES128GCM.suiteName == "AEAD_AES_128_GCM")
        #expect(DTLSSRTPProfile.aes128CMSHA1_80.suiteName == "AES_CM_128_HMAC_SHA1_80")
        #expect(DTLSSRTPProfile.aes128CMSHA1_32.suiteName == "AES_CM_128_HMAC_SHA1_32")
        #expect(
            DTLSSRTPProfile(id: 7) == .aeadAES128GCM && DTLSSRTPProfile(id: 1) == .aes128CMSHA1_80
                && DTLSSRTPProfile(id: 8) == nil)
        // RFC 5764 §4.2's layout: client key | server key | client salt | server salt.
        let material = (0..<56).map(UInt8.init)
        let client = DTLSSRTPKeys(profile: .aeadAES128GCM, material: material, role: .client)
        let server = DTLSSRTPKeys(profile: .aeadAES128GCM, material: material, role: .server)
        #expect(client?.sendKey == Array(0..<16) + Array(32..<44))
        #expect(client?.receiveKey == Array(16..<32) + Array(44..<56))
        #expect(server?.sendKey == client?.receiveKey && server?.receiveKey == client?.sendKey)
        #expect(DTLSSRTPKeys(profile: .aes128CMSHA1_80, material: material, role: .client) == nil)
    }
}
