/// Why a Media Streams message was refused; the description names the field and the fault.
public enum MediaStreamMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Longer than the bound, in bytes.
    case tooLarge(bytes: Int, limit: Int)
    /// Not JSON, or JSON that is not an object.
    case notJSON(String)
    /// An `event` this side does not take.
    case unknownEvent(String)
    /// A field that must be there is not (a dotted path: `media.payload`).
    case missingField(String)
    /// A field of the wrong JSON type.
    case wrongType(field: String, expected: String)
    /// A field of the right type whose value is refused.
    case invalidValue(field: String, reason: String)

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "message of \(bytes) bytes is over the limit of \(limit)"
        case .notJSON(let why): "not a JSON object: \(why)"
        case .unknownEvent(let event): "unknown event \"\(event)\""
        case .missingField(let field): "missing field \(field)"
        case .wrongType(let field, let expected): "field \(field) is not \(expected)"
        case .invalidValue(let field, let reason): "field \(field) is invalid: \(reason)"
        }
    }
}
