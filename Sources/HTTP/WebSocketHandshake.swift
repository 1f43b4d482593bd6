import Crypto

/// The opening handshake's check value, for both ends.
package enum WebSocketHandshake {
    /// The RFC 6455 §1.3 GUID appended to the key before hashing.
    package static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Sec-WebSocket-Accept for a Sec-WebSocket-Key (§4.2.2): base64(SHA-1(key + GUID)).
    package static func accept(key: String) -> String {
        Base64.encode(Crypto.sha1(Array((key + guid).utf8)))
    }
}
