import Foundation

let usage = """
    usage: irisgw <command> [options]

    commands:
      serve [options]             run the gateway: SIP trunks, media, the control API
      call TARGET --from SOURCE   place a call through a running gateway, print its events
      answer --routing-id ID      wait for an inbound call and accept, reject or ignore it
      test --profile P --suite F  run a carrier test suite through the gateway (JUnit, JSON, HTML)
      sip-lint [--json] FILE...   parse SIP messages and report valid/invalid
      sip-endpoint [options]      run the bare SIP answering endpoint (test and bench peer)
      carrier-sim [options]       run the built-in carrier simulator (scripted test numbers)
      carrier-sim call DID ...    place PSTN calls into the gateway
      version                     print the version

    """

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    writeError(usage)
    exit(2)
}
let rest = Array(arguments.dropFirst())
switch command {
case "serve":
    exit(ServeCommand.run(rest))
case "call":
    exit(CallCommand.run(rest))
case "answer":
    exit(AnswerCommand.run(rest))
case "test":
    exit(TestCommand.run(rest))
case "sip-lint":
    exit(SIPLint.run(rest))
case "sip-endpoint":
    exit(SIPEndpointCommand.run(rest))
case "carrier-sim":
    exit(CarrierSimCommand.run(rest))
case "version", "--version":
    print("irisgw 0.1.0")
case "-h", "--help", "help":
    print(usage, terminator: "")
default:
    writeError("irisgw: unknown command \(command)\n\n" + usage)
    exit(2)
}
