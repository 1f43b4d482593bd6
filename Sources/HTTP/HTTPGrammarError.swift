/// Bytes that are not the HTTP/1.1 the grammar allows, or a head that cannot be written
/// (a header value with CR or LF, a method that is not a token). The client turns it into
/// `IrisTransportError.malformedResponse` or `.invalidRequest`, with this message.
package struct HTTPGrammarError: Error, Equatable, Sendable {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }
}
