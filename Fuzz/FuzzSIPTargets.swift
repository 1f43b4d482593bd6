// The libFuzzer entry of the SIP module's fuzz binary. `make fuzz` compiles Sources/SIP once
// with every SIP harness (FuzzSIP.swift, FuzzSDP.swift, FuzzSIPSession.swift) into
// .build/fuzz/fuzz-sip-module and links fuzz-sip, fuzz-sdp and fuzz-sip-session to it; the
// name the binary is run by picks the harness (one compile of the module instead of three).

import Glibc

/// The harness this process runs, chosen from the program name in LLVMFuzzerInitialize.
nonisolated(unsafe) private var harness: ([UInt8]) -> Void = fuzzSIP

@_cdecl("LLVMFuzzerInitialize")
public func fuzzSIPModuleInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    let program = argv.pointee?.pointee.map { String(cString: $0) } ?? ""
    let name = program.split(separator: "/").last.map(String.init) ?? program
    switch name {
    case "fuzz-sip": harness = fuzzSIP
    case "fuzz-sdp": harness = fuzzSDP
    case "fuzz-sip-session": harness = fuzzSIPSession
    default:
        print("fuzz-sip-module: run me as fuzz-sip, fuzz-sdp or fuzz-sip-session (a link named so), not \(name)")
        exit(2)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSIPModule(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    harness(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// A precondition whose message survives -O (`precondition`'s is dropped there): a broken
/// invariant prints "Fatal error: MESSAGE" before libFuzzer reports the crash.
func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
