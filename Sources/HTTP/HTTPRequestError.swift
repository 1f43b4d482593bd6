/// A request the server refuses to read further, with the status it answers.
package struct HTTPRequestError: Error, Equatable, Sendable {
    package let status: Int
    /// Fixed text for the JSON error body; never echoes the request.
    package let message: String

    package init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }
}
