import Foundation
import Gateway
import Glibc
import Media
import SIP
import TestSupport
import Testing

@testable import IrisClient

/// The gateway and the built-in carrier simulator on two hosts of their own (TestNetwork),
/// the app as `irisgw call` beside the gateway, and a bad wire between gateway and carrier.
extension GatewaySuites {
    @Suite(.enabled(if: TestNetwork.canMakeNamespaces, TestNetwork.namespacesNeeded)) struct LossyNetworkTests {
        /// A gateway in `net`'s gateway host routed to a simulator in its carrier host.
        final class Setup: @unchecked Sendable {
            let net: TestNetwork
            let directory: URL
            var apiURL = ""

            init(rtpTimeoutSec: Int = 5) async throws {
                net = try await TestNetwork()
                directory = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-net-\(net.id)")
                do {
                    try FileManager.default.createDirectory(
                        at: directory.appendingPathComponent("profiles"), withIntermediateDirectories: true)
                    let carrier = try net.start(
                        on: .carrier,
                        [
                            GatewayProcess.binary, "carrier-sim", "--listen", net.address(.carrier) + ":0",
                            "--media-host", net.address(.carrier)
                        ])
                    let carrierLines = await lines(of: carrier, until: "ready", timeout: 20)
                    guard
                        let port = carrierLines.first(where: { $0.hasPrefix("listening sip udp ") })?.split(
                            separator: ":"
                        ).last
                    else {
                        throw SocketError("carrier-sim did not start: \(carrierLines)", code: EINVAL)
                    }
                    try """
                    { name: "trunk",
                      outbound: { proxies: ["sip:\(net.address(.carrier)):\(port);transport=udp"], fromDomain: "gw.test", allowedPrefixes: ["+1"] },
                      inbound: { allowFrom: ["\(net.address(.carrier))/32"], routes: [{ did: "+15550001000", routingId: "alice" }] },
                      media: { codecs: ["PCMU"], rtpTimeoutSec: \(rtpTimeoutSec) },
                      sip: { transport: "udp", optionsPingSec: 0 } }
                    """.write(
                        to: directory.appendingPathComponent("profiles/trunk.json5"), atomically: true, encoding: .utf8)
                    let gateway = try net.start(
                        on: .gateway,
                        [
                            GatewayProcess.binary, "serve", "--profiles",
                            directory.appendingPathComponent("profiles").path,
                            "--sip-listen", net.address(.gateway) + ":0", "--api-listen", "127.0.0.1:0",
                            "--rtp-host", net.address(.gateway), "--rtp-ports",
                            "20000-21999" /* the test's own namespace: nothing else binds there */,
                            "--data-dir", dataDir, "--drain-timeout", "2"
                        ])
                    let gatewayLines = await lines(of: gateway, until: "ready", timeout: 20)
                    apiURL =
                        gatewayLines.first { $0.hasPrefix("listening api ") }.map {
                            String($0.dropFirst("listening api ".count))
                        } ?? ""
                    guard gatewayLines.contains("ready"), !apiURL.isEmpty else {
                        throw SocketError("irisgw serve did not start: \(gatewayLines)", code: EINVAL)
                    }
                } catch {
                    close()
                    throw error
                }
            }

            var dataDir: String { directory.appendingPathComponent("data").path }

            /// `irisgw call` in the gateway host: a 440 Hz tone out, what comes back recorded.
            func call(hangupAfter: Double) throws -> (process: ChildProcess, recording: String) {
                let recording = directory.appendingPathComponent("echo.wav").path
                let p = try net.start(
                    on: .gateway,
                    [
                        GatewayProcess.binary, "call", "+15550100001", "--from", "+15557654321",
                        "--api", apiURL, "--data-dir", dataDir, "--tone", "440", "--record", recording,
                        "--hangup-after", String(hangupAfter), "--json"
                    ])
                return (p, recording)
            }

            /// The call records, after the gateway stopped.
            func records() throws -> [CallRecord] {
                let store = try CallRecordStore(path: dataDir + "/calls.sqlite", heartbeatInterval: nil)
                defer { store.close() }
                return store.all()
            }

            func close() {
                net.close()
                try? FileManager.default.removeItem(at: directory)
            }
        }

        /// Everything a finished process printed, or what it printed by `timeout`.
        static func output(of p: ChildProcess, timeout: Double) async -> String {
            if await p.exit(timeout: timeout) == nil { await p.stopped(signal: SIGINT) }
            return p.output
        }

        /// 10 % of UDP lost at random each way between gateway and carrier (SIP and RTP):
        /// retransmissions complete the call, concealment keeps the echo audible.
        @Test func aCallCompletesThroughTenPercentLoss() async throws {
            let setup = try await Setup()
            defer { setup.close() }
            try await setup.net.loseUDP(percent: 10, on: .gateway, interface: setup.net.interface(.gateway))
            try await setup.net.loseUDP(percent: 10, on: .carrier, interface: setup.net.interface(.carrier))
            let (process, recording) = try setup.call(hangupAfter: 6)
            let text = await Self.output(of: process, timeout: 60)
            #expect(process.exitStatus == 0, "\(text)")
            #expect(text.contains("\"reason\":\"completed\""), "\(text)")
            let wav = try WAVFile(contentsOf: recording)
            let tail = Array(wav.samples.suffix(wav.sampleRate * 3))
            let level = ReceivedAudio.toneLevel(tail, hz: 440, sampleRate: wav.sampleRate)
            #expect(level > 0.2, "440 Hz through a 10 % lossy echo: \(level)")
            await setup.net.stopProcesses()
            let records = try setup.records()
            #expect(records.count == 1 && records.first?.endReason == "completed", "\(records)")
        }

        /// The carrier vanishes mid-call: RTP supervision ends the session (media-timeout,
        /// 408 in the record), the BYE that cannot be delivered does not hold anything up.
        @Test func aCarrierThatVanishesMidCallIsHungUp() async throws {
            let setup = try await Setup(rtpTimeoutSec: 5)
            defer { setup.close() }
            let (process, _) = try setup.call(hangupAfter: 60)
            #expect(
                await process.waitForOutput(containing: "\"status\":\"Connected\"", timeout: 20), "\(process.output)")
            try await setup.net.blackhole(.carrier)
            let text = await Self.output(of: process, timeout: 30)
            #expect(text.contains("\"reason\":\"media-timeout\""), "\(text)")
            #expect(!process.isRunning)
            await setup.net.stopProcesses()
            let records = try setup.records()
            #expect(records.first?.endReason == "media-timeout" && records.first?.sipCode == 408, "\(records)")
        }
    }
}
