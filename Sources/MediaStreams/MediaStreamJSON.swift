import Foundation

/// The JSON side of the messages: Foundation's coder, its errors turned into
/// `MediaStreamMessageError`s that name the field.
public enum MediaStreamJSON {
    /// The default bound on one message: 1 MiB (a few seconds of audio; Twilio's own media
    /// messages are 20 ms).
    public static let defaultLimit = 1 << 20

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The message types hold strings, numbers and string maps only: encoding cannot fail.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decode<T: Decodable>(
        _ type: T.Type, from text: String, limit: Int
    ) throws(MediaStreamMessageError)
        -> T
    {
        let bytes = text.utf8.count
        guard bytes <= limit else { throw .tooLarge(bytes: bytes, limit: limit) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        } catch let error as MediaStreamMessageError {
            throw error
        } catch let error as DecodingError {
            throw refusal(error)
        } catch {
            throw .notJSON("\(error)")
        }
    }

    private static func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
        (codingPath + (last.map { [$0] } ?? [])).map { $0.intValue.map(String.init) ?? $0.stringValue }
            .joined(separator: ".")
    }

    private static func refusal(_ error: DecodingError) -> MediaStreamMessageError {
        switch error {
        case .keyNotFound(let key, let context):
            return .missingField(path(context.codingPath, key))
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let expected =
                type == String.self
                ? "a string" : type == Int.self ? "a number" : type is [Any].Type ? "an array" : "an object"
            guard !context.codingPath.isEmpty else { return .notJSON("expected \(expected)") }
            return .wrongType(field: path(context.codingPath), expected: expected)
        case .dataCorrupted(let context):
            guard !context.codingPath.isEmpty else {
                return .notJSON((context.underlyingError as? NSError)?.localizedDescription ?? context.debugDescription)
            }
            return .invalidValue(field: path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            return .notJSON("\(error)")
        }
    }
}
