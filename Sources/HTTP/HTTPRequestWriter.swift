// A request head on the wire (RFC 9112 §3), as the client writes it.

/// Writes the request line and header fields of one request.
package enum HTTPRequestWriter {
    /// The head of a request, ending with the blank line. Field names are sent as given;
    /// `headers` must not repeat `Host` (it is always written from `host`).
    package static func head(
        method: String, target: String, host: String, headers: [(String, String)]
    ) throws(HTTPGrammarError) -> [UInt8] {
        guard HTTPSyntax.isToken(method.utf8) else {
            throw HTTPGrammarError("method \"\(method)\" is not an HTTP token")
        }
        guard target.hasPrefix("/"), !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw HTTPGrammarError("target \"\(target)\" must start with / and hold no spaces or control characters")
        }
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers {
            guard HTTPSyntax.isToken(name.utf8) else {
                throw HTTPGrammarError("header name \"\(name)\" is not an HTTP token")
            }
            // CR or LF in a value would start a new header (request smuggling).
            guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw HTTPGrammarError("header \(name) has a CR, LF or NUL in its value")
            }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }
}
