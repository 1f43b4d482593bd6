import Foundation
import SIP

/// `irisgw sip-lint [--json] FILE...`: parses each file as one SIP message.
enum SIPLint {
    static func run(_ args: [String]) -> Int32 {
        var json = false
        var files: [String] = []
        for a in args {
            if a == "--json" {
                json = true
            } else if a == "-h" || a == "--help" {
                print("usage: irisgw sip-lint [--json] FILE...")
                return 0
            } else {
                files.append(a)
            }
        }
        guard !files.isEmpty else {
            writeError("usage: irisgw sip-lint [--json] FILE...\n")
            return 2
        }
        var allValid = true
        for file in files {
            var verdict: (valid: Bool, reason: String?, status: Int?, kind: String?)
            if let data = FileManager.default.contents(atPath: file) {
                do {
                    let m = try SIPMessage.parse(Array(data), framing: .datagram)
                    verdict = (true, nil, nil, m.isRequest ? "request \(m.method)" : "response \(m.statusCode ?? 0)")
                } catch {
                    verdict = (false, error.description, error.status, nil)
                }
            } else {
                verdict = (false, "cannot read file", nil, nil)
            }
            allValid = allValid && verdict.valid
            if json {
                var obj: [String: Any] = ["file": file, "valid": verdict.valid]
                if let r = verdict.reason { obj["reason"] = r }
                if let s = verdict.status { obj["status"] = s }
                if let k = verdict.kind { obj["message"] = k }
                let data = try! JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else if verdict.valid {
                print("\(file): valid")
            } else {
                print("\(file): invalid: \(verdict.reason ?? "")")
            }
        }
        return allValid ? 0 : 1
    }
}

func writeError(_ s: String) { writeToStandardError(s) }

/// Writes straight to fd 1 (unbuffered, so a parent process sees it at once).
func writeOut(_ s: String) {
    let bytes = Array(s.utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}
