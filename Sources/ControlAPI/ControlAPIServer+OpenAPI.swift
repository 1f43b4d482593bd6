import Formats
import IrisAPI

/// `GET /v1/openapi.json`: docs/openapi.yaml, built into the binary (SwiftPM `embedInCode`;
/// `Sources/ControlAPI/openapi.yaml` is a symbolic link to it), read once and served as JSON.
/// No key: the document holds nothing secret and tools fetch it before they have one.
extension ControlAPIServer {
    /// The document as JSON, or why the copy built in does not read (a test keeps that from
    /// shipping).
    static let openAPIJSON: Result<[UInt8], YAMLSubsetError> = {
        do throws(YAMLSubsetError) {
            let tree = try YAMLSubsetReader.parse(String(decoding: PackageResources.openapi_yaml, as: UTF8.self))
            return .success(Array(JSON5Document.json(tree).utf8))
        } catch {
            return .failure(error)
        }
    }()

    static func openAPIResponse() -> HTTPResponse {
        switch openAPIJSON {
        case .success(let json):
            return .json(200, json)
        case .failure(let error):
            return json(500, APIErrorBody(code: IrisCode.incorrectParams, message: "docs/openapi.yaml: \(error)"))
        }
    }
}
