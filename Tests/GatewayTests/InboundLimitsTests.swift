import Foundation
import IrisAPI
import SIP
import Testing

@testable import Gateway

/// `InboundLimits`: what a carrier's INVITE may put into records, events and webhooks. The
/// numbers are refused past their limit; the carrier's headers are kept whole up to theirs,
/// and `truncated` names the fields that lost something.
@Suite struct InboundLimitsTests {
    static func invite(from: String = "<sip:+15559876543@198.51.100.7>", extra: [String]) throws -> SIPMessage {
        try #require(CarrierPolicyTests.invite(from: from, extra: extra), "the INVITE parses")
    }

    static func a(_ n: Int) -> String { String(repeating: "a", count: n) }

    struct Row: Sendable, CustomStringConvertible {
        var description: String
        var extra: [String]
        var truncated: [String]?
        var check: @Sendable (CarrierCallInfo) -> Bool
    }

    static let rows: [Row] = [
        Row(
            description: "an X- value of 20 KB is left out, a short one kept",
            extra: ["X-Huge: " + a(20_000), "X-Ref: 7f3a9c"],
            truncated: ["headers"], check: { $0.headers == ["X-Ref": "7f3a9c"] }),
        Row(
            description: "an X- value at the limit is kept", extra: ["X-Edge: " + a(InboundLimits.maxValueBytes)],
            truncated: nil, check: { $0.headers?["X-Edge"]?.utf8.count == InboundLimits.maxValueBytes }),
        Row(
            description: "a header name over 64 bytes is left out", extra: ["X-" + a(80) + ": v"],
            truncated: ["headers"], check: { $0.headers == nil }),
        Row(
            description: "past 16 X- headers the rest are left out",
            extra: (0..<20).map { String(format: "X-H%02d: %d", $0, $0) },
            truncated: ["headers"],
            check: { $0.headers?.count == 16 && $0.headers?["X-H15"] == "15" && $0.headers?["X-H16"] == nil }),
        Row(
            description: "a repeated name stops joining at the value limit",
            extra: ["X-Rep: " + a(300), "X-Rep: " + a(300), "X-Rep: b"],
            truncated: ["headers"], check: { $0.headers?["X-Rep"] == a(300) + ", b" }),
        Row(
            description: "a huge display name in P-Asserted-Identity is left out",
            extra: ["P-Asserted-Identity: \"\(a(60_000))\" <sip:+15559876543@198.51.100.7>, <tel:+15559876543>"],
            truncated: ["pAssertedIdentity"], check: { $0.pAssertedIdentity == ["<tel:+15559876543>"] }),
        Row(
            description: "past 10 Diversions the rest are left out",
            extra: (0..<12).map { "Diversion: <sip:+1555000\($0)@198.51.100.7>;reason=unconditional" },
            truncated: ["diversion"], check: { $0.diversion?.count == 10 }),
        Row(
            description: "History-Info entries over the limit are left out",
            extra: [
                "History-Info: <sip:+15550002000@198.51.100.7?x=\(a(700))>;index=1, <sip:+15550001000@203.0.113.10>;index=1.1"
            ],
            truncated: ["historyInfo"], check: { $0.historyInfo == ["<sip:+15550001000@203.0.113.10>;index=1.1"] }),
        Row(
            description: "an Identity over 8 KB is left out, yet the call still says it was signed",
            extra: ["Identity: " + a(9000)],
            truncated: ["identityHeaders"], check: { $0.identity && $0.identityHeaders == nil }),
        Row(
            description: "a total past 16 KB keeps what came first",
            extra: (0..<4).map { "Identity: \($0)" + a(7000) },
            truncated: ["identityHeaders"], check: { $0.identityHeaders?.count == 2 })
    ]

    @Test(arguments: rows) func carrierHeadersAreBounded(_ row: Row) throws {
        let info = CarrierCallInfo(invite: try Self.invite(extra: row.extra))
        #expect(info.truncated == row.truncated, "\(info.truncated ?? [])")
        #expect(row.check(info), "\(info.headers ?? [:])")
        // Whatever the INVITE held, what goes on to the app is bounded.
        let json = try JSONEncoder().encode(info)
        #expect(json.count < InboundLimits.maxTotalBytes + 2048)
    }

    @Test func aHugeVerstatIsLeftOut() throws {
        let info = CarrierCallInfo(
            invite: try Self.invite(
                from: "<sip:+15559876543;verstat=\(Self.a(5000))@198.51.100.7;user=phone>", extra: []))
        #expect(info.verstat == nil && info.truncated == ["verstat"])
    }

    @Test(
        arguments: [
            // (calling, called, status)
            ("+15559876543", "+15550001000", nil),
            (String(repeating: "5", count: 64), "+15550001000", nil),
            (String(repeating: "5", count: 65), "+15550001000", 400),
            ("+15559876543", "+" + String(repeating: "1", count: 63), nil),
            ("+15559876543", "+" + String(repeating: "1", count: 64), 414)
        ] as [(String, String, Int?)])
    func numbersPastTheirLimitAreRefused(calling: String, called: String, status: Int?) {
        let refusal = InboundLimits.numberRefusal(calling: calling, called: called)
        #expect(refusal?.status == status)
        if let refusal { #expect(refusal.reason.contains("over 64 bytes"), "\(refusal.reason)") }
    }
}
