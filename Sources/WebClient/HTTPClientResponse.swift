/// A whole HTTP response as the client hands it back: the status, the header fields with
/// lower-cased names (repeated fields joined with ", "), the body (de-chunked).
struct HTTPClientResponse: Sendable, Equatable {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
}
