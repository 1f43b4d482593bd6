import Foundation

let usage = """
usage: irisgw <command> [options]

commands:
  sip-lint [--json] FILE...   parse SIP messages and report valid/invalid
  sip-endpoint [options]      run the bare SIP answering endpoint (test and bench peer)
  version                     print the version

"""

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    writeError(usage)
    exit(2)
}
let rest = Array(arguments.dropFirst())
switch command {
case "sip-lint":
    exit(SIPLint.run(rest))
case "sip-endpoint":
    exit(SIPEndpointCommand.run(rest))
case "version", "--version":
    print("irisgw 0.1.0")
case "-h", "--help", "help":
    print(usage, terminator: "")
default:
    writeError("irisgw: unknown command \(command)\n\n" + usage)
    exit(2)
}
