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
        var bytes = TokenText.decode(token)!
        bytes[bytes.count - 20] = "X".utf8.first!  // inside the routing id or the MAC: either way the MAC fails
        #expect(throws: RoomTokenError.badSignature) { try signer.verifyPageToken(TokenText.encode(bytes), now: 1_000) }
        let other = RoomTokenSigner(secret: Array(repeating: 7, count: 32))
        #expect(throws: RoomTokenError.badSignature) { try other.verifyPageToken(token, now: 1_000) }
        for bad in ["", "x", "not a token!", String(repeating: "A", count: 2_000), token + "A"] {
            #expect(throws: RoomTokenError.self) { try signer.verifyPageToken(bad, now: 1_000) }
        }
    }

    @Test func aScopedTokenCarriesItsProfilesAndPermissions() throws {
        let scope = PageScope(
            routingId: "web-42", profiles: ["uk", "us_east-1"], allowCapture: true, allowHeaders: false)
        let token = signer.issuePageToken(scope, expiresAt: 2_000)
        let read = try signer.verifyPageScope(token, now: 1_000)
        #expect(read.scope == scope && read.expiresAt == 2_000)
        let narrow = try signer.verifyPageScope(signer.issuePageToken(routingId: "web-1", expiresAt: 2_000), now: 1_000)
            .scope
        #expect(narrow == PageScope(routingId: "web-1", profiles: [], allowCapture: false, allowHeaders: false))
        #expect(throws: RoomTokenError.expired) { try signer.verifyPageScope(token, now: 2_000) }
    }

    /// A token minted before scopes (the routing id alone under the first label) still
    /// verifies, with the narrowest scope: it gains nothing it did not have.
    @Test func aTokenMintedBeforeScopesGetsTheNarrowestScope() throws {
        let old = signer.sign(subject: "web-7", expiresAt: 2_000, purpose: .page)
        #expect(try signer.verifyPageScope(old, now: 1_000).scope == PageScope(routingId: "web-7"))
        #expect(try signer.verifyPageToken(old, now: 1_000) == "web-7")
        // A scoped subject under the old label is a routing id nobody could mint: refused.
        let confused = signer.sign(subject: "web-7\nuk\ncapture", expiresAt: 2_000, purpose: .page)
        #expect(throws: RoomTokenError.self) { try signer.verifyPageScope(confused, now: 1_000) }
    }

    @Test(arguments: [
        "web-1", "web-1\n", "web-1\nuk", "web-1\nuk\ncapture\n", "web 1\n\n",
        "web-1\nuk,\n", "web-1\n\ncapture,capture", "web-1\n\nadmin", "web-1\n\ncapture,", "\n\n"
    ])
    func aSignedSubjectOutsideTheGrammarIsMalformed(subject: String) {
        let token = signer.sign(subject: subject, expiresAt: 2_000, purpose: .scopedPage)
        #expect(throws: RoomTokenError.malformed) { try signer.verifyPageScope(token, now: 1_000) }
    }

    @Test func scopedPageAndRoomTokensNeverPassForEachOther() {
        let scoped = signer.issuePageToken(PageScope(routingId: "room-1"), expiresAt: 2_000)
        #expect(throws: RoomTokenError.badSignature) { try signer.verify(scoped, roomId: "room-1", now: 1_000) }
        let room = signer.issue(roomId: "room-1\n\ncapture,headers", expiresAt: 2_000)
        #expect(throws: RoomTokenError.badSignature) { try signer.verifyPageScope(room, now: 1_000) }
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
