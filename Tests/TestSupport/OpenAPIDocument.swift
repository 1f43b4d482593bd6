import Foundation

/// The control API's OpenAPI document as the tests read it (the JSON `GET /v1/openapi.json`
/// serves): its operations and the statuses each documents, and the Python tools that check
/// it (PyYAML, openapi-spec-validator, schemathesis).
public struct OpenAPIDocument: @unchecked Sendable {
    /// docs/openapi.yaml in the source tree.
    public static let yamlPath = PythonVenv.packageRoot.appendingPathComponent("docs/openapi.yaml").path

    public let json: [String: Any]
    public let bytes: [UInt8]

    public init(json bytes: [UInt8]) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw ChildProcess.Failure("the OpenAPI document is not a JSON object")
        }
        json = object
        self.bytes = bytes
    }

    private static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    private var paths: [String: [String: Any]] { json["paths"] as? [String: [String: Any]] ?? [:] }

    /// Every operation as `METHOD /path/{template}`.
    public var operations: Set<String> {
        Set(
            paths.flatMap { path, item in
                item.keys.filter { Self.methods.contains($0) }.map { "\($0.uppercased()) \(path)" }
            })
    }

    /// The statuses `operation` (`POST /v1/sessions`) documents.
    public func statuses(of operation: String) -> Set<Int> {
        let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, let op = paths[parts[1]]?[parts[0].lowercased()] as? [String: Any],
            let responses = op["responses"] as? [String: Any]
        else { return [] }
        return Set(responses.keys.compactMap { Int($0) })
    }

    /// Whether `operation` takes a request body.
    public func hasBody(_ operation: String) -> Bool {
        let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, let op = paths[parts[1]]?[parts[0].lowercased()] as? [String: Any] else {
            return false
        }
        return op["requestBody"] != nil
    }

    /// An interpreter that has PyYAML: Debian's (python3-yaml) or the venv's; nil without.
    public static func pythonWithYAML() async -> String? {
        for python in ["/usr/bin/python3", PythonVenv.python] where FileManager.default.isExecutableFile(atPath: python)
        {
            if (try? await ChildProcess.run(python, ["-c", "import yaml"], timeout: 20))?.status == 0 { return python }
        }
        return nil
    }

    /// The JSON texts among `instances` that `components/schemas/<name>` refuses, each with
    /// why (jsonschema, Draft 2020-12, from the venv); empty when every one fits.
    public func refused(_ instances: [String], by name: String) async throws -> [String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-openapi-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(bytes).write(to: folder.appendingPathComponent("document.json"))
        try Data(("[" + instances.joined(separator: ",") + "]").utf8).write(
            to: folder.appendingPathComponent("instances.json"))
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1], encoding="utf-8"))
            schema["$ref"] = "#/components/schemas/" + sys.argv[3]
            validator = jsonschema.Draft202012Validator(schema)
            for instance in json.load(open(sys.argv[2], encoding="utf-8")):
                errors = list(validator.iter_errors(instance))
                if errors:
                    print(json.dumps(instance) + ": " + "; ".join(e.message[:200] for e in errors))
            """
        let r = try await ChildProcess.run(
            PythonVenv.python,
            [
                "-c", script, folder.appendingPathComponent("document.json").path,
                folder.appendingPathComponent("instances.json").path, name
            ], timeout: 30)
        guard r.status == 0 else { return ["the validator failed: \(r.output)"] }
        return r.output.split(separator: "\n").map(String.init)
    }

    /// Compares this document with PyYAML's reading of docs/openapi.yaml: nil when they are
    /// the same objects, else where they first differ.
    public func differenceFromYAML(python: String) async throws -> String? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-openapi-\(UUID().uuidString.prefix(8)).json")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import json, sys, yaml
            def diff(a, b, at):
                number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                if number(a) and number(b):
                    return None if a == b else at + ": " + repr(a) + " != " + repr(b)
                if type(a) is not type(b):
                    return at + ": " + repr(a)[:80] + " != " + repr(b)[:80]
                if isinstance(a, dict):
                    if set(a) != set(b):
                        return at + ": keys " + repr(sorted(set(a) ^ set(b), key=str))
                    for k in a:
                        d = diff(a[k], b[k], at + "/" + str(k))
                        if d: return d
                    return None
                if isinstance(a, list):
                    if len(a) != len(b): return at + ": " + str(len(a)) + " items != " + str(len(b))
                    for i, (x, y) in enumerate(zip(a, b)):
                        d = diff(x, y, at + "/" + str(i))
                        if d: return d
                    return None
                return None if a == b else at + ": " + repr(a)[:80] + " != " + repr(b)[:80]
            d = diff(yaml.safe_load(open(sys.argv[1], encoding="utf-8")), json.load(open(sys.argv[2], encoding="utf-8")), "")
            print("same" if d is None else "differs at " + d)
            """
        let r = try await ChildProcess.run(python, ["-c", script, Self.yamlPath, file.path], timeout: 30)
        let out = r.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return r.status == 0 && out == "same" ? nil : out
    }
}
