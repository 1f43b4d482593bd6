import Foundation
import Testing

@testable import Gateway

private let signer = RoomTokenSigner(secret: Array(0..<32))
private let otherSigner = RoomTokenSigner(secret: Array(repeating: 0xA5, count: 32))
/// Valid for "room-1" strictly before t = 2000.
private let token = signer.issue(roomId: "room-1", expiresAt: 2_000.75)

/// `token` with one byte of its decoded form changed (negative offsets count from the end).
private func tamper(_ token: String, byteAt offset: Int) -> String {
    var bytes = TokenText.decode(token)!
    bytes[offset < 0 ? bytes.count + offset : offset] ^= 0x01
    return TokenText.encode(bytes)
}

/// One `verify` call and what it must answer.
struct VerifyCase: Sendable, CustomTestStringConvertible {
    let name: String
    let token: String
    var roomId = "room-1"
    var now: Double = 1_500
    let expected: RoomTokenError?

    var testDescription: String { name }
}

@Test(arguments: [
    VerifyCase(name: "valid", token: token, expected: nil),
    VerifyCase(name: "valid a moment before expiry", token: token, now: 1_999.999, expected: nil),
    VerifyCase(name: "expired at the expiry second", token: token, now: 2_000, expected: .expired),
    VerifyCase(name: "expired long ago", token: token, now: 90_000, expected: .expired),
    VerifyCase(name: "another room's token", token: token, roomId: "room-2", expected: .foreignRoom),
    VerifyCase(name: "room id is a prefix", token: token, roomId: "room-", expected: .foreignRoom),
    VerifyCase(name: "tampered signature", token: tamper(token, byteAt: -1), expected: .badSignature),
    VerifyCase(name: "tampered expiry", token: tamper(token, byteAt: 8), expected: .badSignature),
    VerifyCase(name: "tampered room", token: tamper(token, byteAt: 11), roomId: "soom-1", expected: .badSignature),
    VerifyCase(
        name: "signed with another secret",
        token: otherSigner.issue(roomId: "room-1", expiresAt: 2_000), expected: .badSignature),
    VerifyCase(
        name: "expired and tampered: the signature is checked first",
        token: tamper(token, byteAt: -1), now: 5_000, expected: .badSignature),
    VerifyCase(name: "empty", token: "", expected: .malformed),
    VerifyCase(name: "not base64", token: "not a token!", expected: .malformed),
    VerifyCase(
        name: "standard base64 alphabet",
        token: token.replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/") + "+/", expected: .malformed),
    VerifyCase(name: "padded", token: token + "==", expected: .malformed),
    VerifyCase(name: "truncated by one character", token: String(token.dropLast()), expected: .malformed),
    VerifyCase(name: "truncated signature", token: String(token.dropLast(8)), expected: .malformed),
    VerifyCase(name: "header only", token: String(token.prefix(12)), expected: .malformed),
    VerifyCase(name: "unknown version", token: tamper(token, byteAt: 0), expected: .malformed),
    VerifyCase(name: "oversized", token: String(repeating: "A", count: 4_000), expected: .malformed)
])
func verifyAnswers(_ test: VerifyCase) {
    if let expected = test.expected {
        #expect(throws: expected) { try signer.verify(test.token, roomId: test.roomId, now: test.now) }
    } else {
        #expect(throws: Never.self) { try signer.verify(test.token, roomId: test.roomId, now: test.now) }
    }
}

@Test(arguments: [
    (RoomTokenError.expired, -105), (.malformed, -103), (.foreignRoom, -103), (.badSignature, -103)
])
func irisCodes(error: RoomTokenError, code: Int) {
    #expect(error.irisCode == code)
}

@Test(arguments: ["", "room-1", "räum-☎️", String(repeating: "x", count: 300)])
func tokensAreURLSafeAndRoundTrip(roomId: String) throws {
    let issued = signer.issue(roomId: roomId, expiresAt: 2_000)
    #expect(issued.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    try signer.verify(issued, roomId: roomId, now: 1_999)
}

// MARK: The secret file

@Test func theSecretIsCreatedOnceWithMode0600AndReused() throws {
    try withTemporaryDirectory("token") { dir in
        let first = try RoomTokenSigner.loadOrCreate(dataDir: dir)
        let path = dir + "/room-token-secret"
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.count == 65 && text.hasSuffix("\n"))
        #expect(text.dropLast().allSatisfy { $0.isHexDigit })

        let issued = first.issue(roomId: "room-1", expiresAt: 2_000)
        let second = try RoomTokenSigner.loadOrCreate(dataDir: dir + "/")
        try second.verify(issued, roomId: "room-1", now: 1_000)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        // Only the secret is left behind: no temporary files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["room-token-secret"])
    }
}

@Test func twoDirectoriesGetDifferentSecrets() throws {
    try withTemporaryDirectory("token") { dir in
        try FileManager.default.createDirectory(atPath: dir + "/a", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir + "/b", withIntermediateDirectories: false)
        let issued = try RoomTokenSigner.loadOrCreate(dataDir: dir + "/a").issue(roomId: "r", expiresAt: 2_000)
        #expect(throws: RoomTokenError.badSignature) {
            try RoomTokenSigner.loadOrCreate(dataDir: dir + "/b").verify(issued, roomId: "r", now: 1_000)
        }
    }
}

@Test func aMissingDataDirectoryIsAnErrorNamingTheFile() throws {
    try withTemporaryDirectory("token") { dir in
        let error = #expect(throws: RoomTokenSecretError.self) {
            try RoomTokenSigner.loadOrCreate(dataDir: dir + "/missing")
        }
        #expect(error?.path == dir + "/missing/room-token-secret")
        #expect(error?.reason == "No such file or directory")
    }
}

@Test(arguments: ["", "abc\n", String(repeating: "0", count: 62) + "zz\n", String(repeating: "ab", count: 33)])
func aMalformedSecretFileIsRefused(content: String) throws {
    try withTemporaryDirectory("token") { dir in
        let path = dir + "/room-token-secret"
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: RoomTokenSecretError.self) {
            try RoomTokenSigner.loadOrCreate(dataDir: dir)
        }
        #expect(error?.path == path)
        #expect(error?.reason == "expected 64 hexadecimal digits")
    }
}
