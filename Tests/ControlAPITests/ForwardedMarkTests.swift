import Gateway
import Testing

@testable import ControlAPI

/// `X-Irisgw-Forwarded` (docs/api.md, "Clusters"): what one node signs, another verifies;
/// anything else about the request, another key or a stale time is refused with 401.
@Suite struct ForwardedMarkTests {
    static let key = Array(repeating: UInt8(7), count: 32)
    static let now: Int64 = 1_800_000_000

    static func signed(_ method: String = "GET", _ target: String = "/v1/sessions/r1", at time: Int64 = now) -> String {
        ForwardedMark(nodeId: "gw1", time: time).value(method: method, target: target, key: key)
    }

    @Test func whatANodeSignsVerifies() throws {
        let mark = try ForwardedMark.verify(
            Self.signed(), method: "GET", target: "/v1/sessions/r1", now: Self.now + 30, key: Self.key)
        #expect(mark == ForwardedMark(nodeId: "gw1", time: Self.now))
    }

    @Test(arguments: [
        ("POST", "/v1/sessions/r1", now, key),  // another method
        ("GET", "/v1/sessions/r2", now, key),  // another target
        ("GET", "/v1/sessions/r1", now + 31, key),  // stale
        ("GET", "/v1/sessions/r1", now - 31, key),  // from the future
        ("GET", "/v1/sessions/r1", now, Array(repeating: UInt8(8), count: 32))  // another cluster's key
    ])
    func anythingElseIsRefused(method: String, target: String, now: Int64, key: [UInt8]) {
        do {
            _ = try ForwardedMark.verify(Self.signed(), method: method, target: target, now: now, key: key)
            Issue.record("accepted for \(method) \(target) at \(now)")
        } catch {
            #expect(error.refusal == .unauthenticated)
        }
    }

    @Test(arguments: ["", "gw1", "gw1;t=1", "gw1;t=x;sig=00", ";t=1800000000;sig=00", "gw1;sig=00;t=1800000000"])
    func aMalformedMarkIsUnauthenticated(_ value: String) {
        do {
            _ = try ForwardedMark.verify(value, method: "GET", target: "/", now: Self.now, key: Self.key)
            Issue.record("accepted \(value)")
        } catch {
            #expect(error.refusal == .unauthenticated)
        }
    }

    @Test func theTargetIsCanonical() {
        #expect(ForwardedMark.target(path: "/v1/sessions", query: [:]) == "/v1/sessions")
        #expect(
            ForwardedMark.target(path: "/v1/sessions/a b+é", query: ["since": "1", "roomId": "x/y"])
                == "/v1/sessions/a%20b%2B%C3%A9?roomId=x%2Fy&since=1")
    }
}
