import Capture
import CarrierTest
import Foundation
import FoundationXML
import IrisAPI
import Media
import Testing

extension GatewaySuites {
    /// `irisgw test`, the real binary, against a gateway and SIPp as the carrier: a passing
    /// test, a deliberately failing one, and the JUnit, JSON and HTML reports.
    @Suite struct CarrierTestCommandTests {
        static let suite = """
            { name: "smoke",
              tests: [
                { name: "echo", target: "+15551230001",
                  steps: [ { expect: "Connected", withinSec: 10 }, { expectEcho: 1000, withinSec: 5 }, { hangup: true },
                           { expectEnd: "completed" } ] },
                { name: "expects busy", target: "+15551230002",
                  steps: [ { expectEnd: "busy", sipCode: 486, withinSec: 2 } ] },
              ] }
            """

        @Test func suiteRunsJudgesAndReports() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), sippArguments: ["-rtp_echo"], calls: 2)
            defer { gw.stop(); sipp.stop() }
            let dir = gw.directory
            let suitePath = dir.appendingPathComponent("smoke.json5").path
            try Self.suite.write(toFile: suitePath, atomically: true, encoding: .utf8)
            let junit = dir.appendingPathComponent("junit.xml").path,
                json = dir.appendingPathComponent("report.json").path
            let html = dir.appendingPathComponent("report.html").path
            let evidence = dir.appendingPathComponent("evidence").path
            let r = try await GatewayCLITests.run(
                [
                    "test", "--profile", "trunk", "--suite", suitePath, "--api", gw.apiURL, "--data-dir", gw.dataDir,
                    "--junit", junit, "--json", json, "--html", html, "--evidence", evidence
                ], timeout: 60)
            #expect(r.status == 1, "\(r.lines)")
            #expect(r.lines.contains { $0.hasPrefix("✔ echo") }, "\(r.lines)")
            let failure = r.lines.first { $0.hasPrefix("✘ expects busy") } ?? ""
            #expect(
                failure.contains(
                    "step 1: expected the call to end busy within 2.0 s; got Initializing, Connecting (180 Ringing), Connected (200 OK)"
                ),
                "\(r.lines)")
            #expect(r.lines.last == nil || r.lines.contains { $0.hasPrefix("1 passed, 1 failed") })

            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            let doc = try XMLDocument(xmlString: xml)
            let cases = try doc.nodes(forXPath: "//testcase")
            #expect(cases.count == 2)
            #expect(try doc.nodes(forXPath: "//testcase[@name='expects busy']/failure").count == 1)
            #expect(try doc.nodes(forXPath: "//testsuite[@failures='1']").count == 1)

            struct Report: Decodable { var suite: String; var passed: Bool; var results: [TestCallResult] }
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            #expect(report.suite == "smoke" && !report.passed && report.results.count == 2)
            let echo = report.results[0]
            #expect(echo.passed && echo.codec == "PCMU" && echo.endReason == "completed")
            #expect((echo.postDialDelayMs ?? -1) >= 0 && (echo.answerMs ?? -1) >= (echo.postDialDelayMs ?? 0))
            #expect((echo.mos ?? 0) > 4, "MOS \(echo.mos ?? 0)")
            #expect(
                (echo.audioRoundTripMs ?? 0) > 0 && (echo.audioRoundTripMs ?? 9999) < 2000,
                "round trip \(echo.audioRoundTripMs ?? -1)")
            #expect(echo.sdpSane == true && !echo.timeline.isEmpty)
            #expect(
                report.results[1].failedStep == 1
                    && report.results[1].failure?.contains("expected the call to end busy") == true)
            let page = try String(contentsOfFile: html, encoding: .utf8)
            #expect(page.contains("<polyline") && page.contains("audio round trip"))
            #expect(
                page.contains("<svg") && page.contains("1/2 passed") && !page.contains("http://"), "self-contained HTML"
            )
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // The JSON carries each call's SIP trace, message for message what SIPp logged.
            let carrier = sippMessages(sipp.messages).map(\.lines)
            let traced = report.results.flatMap { $0.sip?.messages ?? [] }.map { messageLines($0.text) }
            #expect(traced == carrier, "\(report.results.map { $0.sip?.messages.map(\.firstLine) ?? [] })")
            #expect(report.results.allSatisfy { $0.sip?.messages.first?.firstLine.hasPrefix("INVITE ") == true })
            // The HTML draws the real ladder: our INVITE, ACK and BYE too, each message's text a click away.
            #expect(
                page.contains("SIP on the trunk") && page.contains(">INVITE sip:+15551230001@")
                    && page.contains(">ACK sip:")
                    && page.contains(">BYE sip:") && page.contains(">180 Ringing<") && page.contains(">200 OK<"),
                "ladder labels")
            #expect(page.contains("id=\"c0-m0\"") && page.contains("href=\"#c0-m0\""))
            try Self.checkEvidence(report.results, folder: evidence, junit: xml, page: page)
            try await Self.checkInBrowser(html)
        }

        /// `--evidence`: each call's pcap and the two WAVs, named for the test, linked from
        /// the JUnit and (relative to the page) the HTML; the carrier's WAV holds our tone as
        /// SIPp echoed it.
        static func checkEvidence(_ results: [TestCallResult], folder: String, junit: String, page: String) throws {
            let echo = try #require(results.first?.evidence)
            #expect(
                echo.pcap == folder + "/echo-1.pcap" && echo.carrierWAV == folder + "/echo-1-carrier.wav"
                    && echo.appWAV == folder + "/echo-1-app.wav", "\(echo)")
            let pcap = try PcapReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: try #require(echo.pcap)))))
            #expect(pcap.packets.count > 20)  // the echo test is short: under a second of audio
            for path in [echo.carrierWAV, echo.appWAV] {
                let wav = try WAVFile(contentsOf: try #require(path))
                #expect(wav.sampleRate == 8000 && wav.samples.count > 1600, "\(path ?? "")")
                let score = AudioAnalyzer.score(wav.samples, sampleRate: wav.sampleRate, tones: [1000])
                #expect(score.tonesFound == [1000], "\(path ?? ""): \(score)")
            }
            #expect(results[1].evidence?.pcap == folder + "/expects-busy-1.pcap")
            #expect(
                junit.contains("[[ATTACHMENT|\(folder)/echo-1.pcap]]")
                    && junit.contains("name=\"evidence.carrier_wav\""))
            #expect(
                page.contains("href=\"evidence/echo-1.pcap\"")
                    && page.contains("<audio controls preload=\"none\" src=\"evidence/echo-1-carrier.wav\""))
        }

        /// The report opened in headless Chromium: the ladder renders, a click on the first
        /// arrow shows the INVITE's text, and a screenshot is not blank.
        static func checkInBrowser(_ html: String) async throws {
            guard Chromium.isAvailable else {
                Issue.record(Chromium.missing)
                return
            }
            let browser = try await Chromium()
            defer { browser.stop() }
            let page = try await browser.open(URL(fileURLWithPath: html).absoluteString)
            let arrows = try page.evaluate("document.querySelectorAll('svg.sip a').length") as? Int ?? 0
            #expect(arrows >= 8, "\(arrows) ladder arrows")
            let hidden = try page.evaluate("getComputedStyle(document.getElementById('c0-m0')).display") as? String
            #expect(hidden == "none")
            _ = try page.evaluate(
                "document.querySelector('a[href=\"#c0-m0\"]').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
            #expect(
                try await page.waitFor(
                    "getComputedStyle(document.getElementById('c0-m0')).display === 'block'", timeout: 5))
            let text = try page.evaluate("document.getElementById('c0-m0').innerText") as? String ?? ""
            #expect(text.contains("INVITE sip:+15551230001@") && text.contains("Call-ID:"), "\(text.prefix(300))")
            let file = TestArtifacts.directory.appendingPathComponent("carrier-test-report.png")
            let png = try page.screenshot(to: file)
            let (coverage, colours) = try page.inkCoverage(png: png)
            #expect(
                png.count > 2_000 && coverage > 0.02 && colours > 8,
                "blank screenshot \(file.path): \(coverage) \(colours)")
        }

        @Test func aBadSuiteFileNamesTheKeyAndExitsTwo() async throws {
            let gw = try await GatewayProcess(profiles: [.init(proxies: [9])])
            defer { gw.stop() }
            let path = gw.directory.appendingPathComponent("bad.json5").path
            try "{ name: \"x\", tests: [ { name: \"t\", target: \"1\", steps: [ { dial: true } ] } ] }".write(
                toFile: path, atomically: true, encoding: .utf8)
            let r = try await GatewayCLITests.run([
                "test", "--profile", "trunk", "--suite", path, "--api", gw.apiURL, "--data-dir", gw.dataDir
            ])
            #expect(r.status == 2)
        }
    }
}
