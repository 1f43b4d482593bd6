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

/// Ends the process with `code` once a command has returned: its output is flushed, and the C
/// libraries' exit-time teardown (OpenSSL's cleanup, stdio) is skipped, since an event loop's
/// thread may still be letting go of what it held as the command returns (a heap corrupted at
/// exit by `carrier-sim call` showed the race). Everything a command must leave behind (records,
/// files, BYEs) it has completed before returning.
func end(_ code: Int32) -> Never {
    fflush(nil)
    _exit(code)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    writeError(usage)
    exit(2)
}
let rest = Array(arguments.dropFirst())
switch command {
case "serve":
    end(ServeCommand.run(rest))
case "call":
    end(CallCommand.run(rest))
case "answer":
    end(AnswerCommand.run(rest))
case "test":
    end(TestCommand.run(rest))
case "sip-lint":
    end(SIPLint.run(rest))
case "sip-endpoint":
    end(SIPEndpointCommand.run(rest))
case "carrier-sim":
    end(CarrierSimCommand.run(rest))
case "version", "--version":
    print("irisgw 0.1.0")
case "-h", "--help", "help":
    print(usage, terminator: "")
default:
    writeError("irisgw: unknown command \(command)\n\n" + usage)
    exit(2)
}
