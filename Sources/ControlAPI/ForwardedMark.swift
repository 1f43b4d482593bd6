import Crypto
import Foundation
import Gateway
import IrisAPI

/// `X-Irisgw-Forwarded: <nodeId>;t=<unix seconds>;sig=<hex>`: what a cluster node adds to a
/// request it forwards to another node (docs/api.md, "Clusters"). `sig` is HMAC-SHA-256,
/// under the key every node derives from the cluster's token secret, over the method, the
/// target (path and query), `t` and the node id, one per line. A request that carries a
/// valid mark is answered by the node itself: never forwarded again, never placed again.
struct ForwardedMark: Sendable, Equatable {
    static let header = "X-Irisgw-Forwarded"
    /// How far `t` may be from the receiver's clock, in seconds, either way.
    static let maxSkew: Int64 = 30

    /// The node that forwarded the request.
    var nodeId: String
    /// When it was forwarded, Unix seconds.
    var time: Int64

    /// The header's value for `method` on `target`, signed with `key`.
    func value(method: String, target: String, key: [UInt8]) -> String {
        "\(nodeId);t=\(time);sig=" + Crypto.hex(signature(method: method, target: target, key: key))
    }

    private func signature(method: String, target: String, key: [UInt8]) -> [UInt8] {
        Crypto.hmacSHA256(key: key, data: Array("\(method)\n\(target)\n\(time)\n\(nodeId)".utf8))
    }

    /// The mark in `value`, checked: the signature (constant time), then the time at `now`.
    /// 401 for a mark that is malformed, signed with another key, for another request, or stale.
    static func verify(
        _ value: String, method: String, target: String, now: Int64, key: [UInt8]
    ) throws(GatewayError) -> ForwardedMark {
        let refused = GatewayError(
            IrisCode.incorrectParams, .unauthenticated, "\(header) is not a valid node signature")
        let fields = value.split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard fields.count == 3, !fields[0].isEmpty, fields[1].hasPrefix("t="), fields[2].hasPrefix("sig="),
            let time = Int64(fields[1].dropFirst(2))
        else { throw refused }
        let mark = ForwardedMark(nodeId: fields[0], time: time)
        let expected = Array(Crypto.hex(mark.signature(method: method, target: target, key: key)).utf8)
        guard Crypto.constantTimeEqual(expected, Array(fields[2].dropFirst(4).lowercased().utf8)) else {
            throw refused
        }
        guard abs(now - time) <= maxSkew else {
            throw GatewayError(
                IrisCode.incorrectParams, .unauthenticated, "\(header) is stale (more than \(maxSkew) s off)")
        }
        return mark
    }

    /// The request's target as both ends sign it: the path and the query, each part
    /// percent-encoded but for unreserved characters (RFC 3986 §2.3), query names sorted.
    /// The receiver rebuilds it from what it parsed, so the two agree however it was spelled.
    static func target(path: String, query: [String: String]) -> String {
        let path = path.split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }
            .joined(separator: "/")
        guard !query.isEmpty else { return path }
        return path + "?"
            + query.sorted { $0.key < $1.key }.map { encode($0.key) + "=" + encode($0.value) }
            .joined(separator: "&")
    }

    private static func encode(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + Crypto.hex([b], uppercase: true)
            }
        }
        return out
    }
}
