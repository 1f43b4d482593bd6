import Foundation
import Testing
@testable import Gateway

/// Page tokens share the room tokens' format, secret and HMAC, under their own label.
@Suite struct PageTokenTests {
    let signer = RoomTokenSigner(secret: Array(0..<32))

    @Test func aPageTokenNamesItsRoutingIdUntilItExpires() throws {
        let token = signer.issuePageToken(routingId: "web-42", expiresAt: 2_000.5)
        #expect(try signer.verifyPageToken(token, now: 1_999.9) == "web-42")
        #expect(throws: RoomTokenError.expired) { try signer.verifyPageToken(token, now: 2_000) }
        #expect(RoomTokenError.expired.irisCode == -105)
    }

    @Test func roomAndPageTokensNeverPassForEachOther() {
        let page = signer.issuePageToken(routingId: "room-1", expiresAt: 2_000)
        let room = signer.issue(roomId: "room-1", expiresAt: 2_000)
        #expect(page != room)
        #expect(throws: RoomTokenError.badSignature) { try signer.verify(page, roomId: "room-1", now: 1_000) }
        #expect(throws: RoomTokenError.badSignature) { try signer.verifyPageToken(room, now: 1_000) }
    }

    @Test func alteredForeignAndMalformedTokensAreRefused() {
        let token = signer.issuePageToken(routingId: "web-42", expiresAt: 2_000)
        var bytes = Base64URL.decode(token)!
        bytes[bytes.count - 20] = "X".utf8.first!  // inside the routing id or the MAC: either way the MAC fails
        #expect(throws: RoomTokenError.badSignature) { try signer.verifyPageToken(Base64URL.encode(bytes), now: 1_000) }
        let other = RoomTokenSigner(secret: Array(repeating: 7, count: 32))
        #expect(throws: RoomTokenError.badSignature) { try other.verifyPageToken(token, now: 1_000) }
        for bad in ["", "x", "not a token!", String(repeating: "A", count: 2_000), token + "A"] {
            #expect(throws: RoomTokenError.self) { try signer.verifyPageToken(bad, now: 1_000) }
        }
    }

    @Test func routingIdsArePlainNames() {
        for good in ["a", "web-42", "alice@example.com", "t:1.2_3", String(repeating: "x", count: 128)] {
            #expect(RoomTokenSigner.isValidRoutingId(good), "\(good)")
        }
        for bad in ["", "a b", "a/b", "ü", String(repeating: "x", count: 129), "a\u{0}"] {
            #expect(!RoomTokenSigner.isValidRoutingId(bad), "\(bad)")
        }
    }
}
