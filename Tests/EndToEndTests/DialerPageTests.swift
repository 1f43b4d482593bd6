import Foundation
import IrisAPI
import SIP
import TestSupport
import Testing

/// The dialer page (`/app`) in headless Chromium against a real `irisgw serve` with the
/// carrier simulator. Until the platform leg speaks WebRTC (ICE-lite, DTLS-SRTP), the checks
/// stop where media would start: the page signs in with a page token, sends the browser's
/// real offer, shows the API's answer or error and follows the events.
extension GatewaySuites {
    // Serialized for memory and the cores: one headless Chromium (several processes) at a time.
    @Suite(.serialized, .enabled(if: Chromium.isAvailable, Chromium.missing)) struct DialerPageTests {
        /// The simulator, a gateway routing +15550001000 to `alice`, Chromium, and the page
        /// opened with a page token for `alice` in its fragment.
        final class Rig {
            let sim: CarrierSimProcess
            let gw: GatewayProcess
            let browser: Chromium
            let page: ChromiumPage
            let token: String

            init() async throws {
                sim = try await CarrierSimProcess()
                do {
                    gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
                } catch {
                    sim.stop()
                    throw error
                }
                do {
                    token = try await GatewaySuites.PageTokenScopeTests.mint(gw, routingId: "alice")
                    browser = try await Chromium()
                } catch {
                    gw.stop()
                    sim.stop()
                    throw error
                }
                do {
                    page = try await browser.open(gw.apiURL + "/app#token=" + token)
                } catch {
                    browser.stop()
                    gw.stop()
                    sim.stop()
                    throw error
                }
            }

            func stop() {
                browser.stop()
                gw.stop()
                sim.stop()
            }

            var status: String { (try? page.evaluate("irisgwTest.status()") as? String) ?? "?" }
            var state: [String: Any] { (try? page.evaluate("irisgwTest.state()") as? [String: Any]) ?? [:] }
            /// The page's events as `event[:status|:reason]`, for messages and order checks.
            var trace: [String] {
                let script =
                    "irisgwTest.events.map(e => e.event + (e.status ? ':' + e.status : '') + (e.reason ? ':' + e.reason : '') + (e.type ? ':' + e.type : ''))"
                return (try? page.evaluate(script) as? [String]) ?? []
            }

            /// A screenshot under .build/test-artifacts/, checked not to be blank.
            func screenshot(_ name: String) throws -> URL {
                let file = TestArtifacts.directory.appendingPathComponent("dialer-\(name).png")
                let png = try page.screenshot(to: file)
                let (coverage, colours) = try page.inkCoverage(png: png)
                #expect(
                    png.count > 2_000 && coverage > 0.02 && colours > 8,
                    "blank screenshot \(file.path): \(coverage) \(colours)")
                return file
            }

            /// Console errors other than the browser's note of an API refusal the page shows anyway.
            var unexpectedConsoleErrors: [String] {
                page.consoleErrors.filter { !$0.contains("Failed to load resource") }
            }
        }

        @Test(.timeLimit(.minutes(2)))
        func thePageSignsInWithAPageTokenAndTakesItOutOfTheAddressBar() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(
                try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10),
                "\(rig.status) \(rig.page.consoleErrors)")
            #expect(rig.status == "Ready")
            #expect(rig.state["routingId"] as? String == "alice")
            #expect(try rig.page.evaluate("location.hash") as? String == "", "the token stays out of the address bar")
            #expect(
                try rig.page.evaluate("document.getElementById('identity').textContent") as? String ?? ""
                    != "Not signed in.")
            #expect(try rig.page.evaluate("document.getElementById('call').disabled") as? Bool == false)
            _ = try rig.screenshot("signed-in")
            // The harness's fake microphone plays its 440 Hz (what the audio test will look for
            // in the echo), and nothing at 1 kHz.
            let levels =
                try rig.page.evaluate(
                    """
                    (async () => {
                      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
                      const ctx = new AudioContext();
                      const analyser = ctx.createAnalyser();
                      analyser.fftSize = 8192;
                      ctx.createMediaStreamSource(stream).connect(analyser);
                      await new Promise((r) => setTimeout(r, 800));
                      const x = new Float32Array(analyser.fftSize);
                      analyser.getFloatTimeDomainData(x);
                      const level = (hz) => {
                        const c = 2 * Math.cos(2 * Math.PI * hz / ctx.sampleRate);
                        let s1 = 0, s2 = 0;
                        for (const v of x) { const s0 = v + c * s1 - s2; s2 = s1; s1 = s0; }
                        return 2 * Math.sqrt(Math.max(s1 * s1 + s2 * s2 - c * s1 * s2, 0)) / x.length;
                      };
                      stream.getTracks().forEach((t) => t.stop());
                      return [level(440), level(1000)];
                    })()
                    """, awaitPromise: true) as? [Double] ?? []
            #expect(
                levels.count == 2 && levels[0] > 0.2 && levels[1] < 0.05,
                "fake microphone levels at 440 Hz and 1 kHz: \(levels)")
            #expect(rig.unexpectedConsoleErrors.isEmpty, "\(rig.page.consoleErrors)")
        }

        /// The browser's offer (ICE, DTLS fingerprint, SAVPF, Opus, candidates gathered)
        /// reaches createWithTN and the gateway answers as an ICE-lite DTLS server: ice-lite,
        /// its own credentials and fingerprint, setup:passive, rtcp-mux, one host candidate.
        @Test(.timeLimit(.minutes(2)))
        func theBrowsersOfferIsAnsweredAsICELiteAndDTLSSRTP() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10))
            try rig.page.evaluate(
                "document.getElementById('number').value = '+15550100001'; document.getElementById('call').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.state().answerSdp || irisgwTest.state().error", timeout: 15),
                "\(rig.status) \(rig.state)")
            let state = rig.state
            let offer = try #require(state["offerSdp"] as? String, "\(state)")
            #expect(offer.contains("m=audio") && offer.contains("UDP/TLS/RTP/SAVPF"), "\(offer)")
            #expect(
                offer.contains("a=fingerprint:sha-256") && offer.contains("a=ice-ufrag:")
                    && offer.contains("opus/48000/2"), "\(offer)")
            #expect(offer.contains("a=candidate:"), "ICE gathering completed before the offer went out: \(offer)")
            let answer = try #require(state["answerSdp"] as? String, "\(state)")
            for line in [
                "a=ice-lite", "a=fingerprint:sha-256 ", "a=setup:passive", "a=rtcp-mux", "typ host",
                "UDP/TLS/RTP/SAVPF 111",
                "a=rtpmap:111 opus/48000/2"
            ] {
                #expect(answer.contains(line), "\(line) missing from the answer:\n\(answer)")
            }
            #expect(
                state["remoteDescriptionError"] is NSNull || state["remoteDescriptionError"] == nil,
                "the browser took our answer: \(state)")
            #expect(
                try await rig.page.waitFor("irisgwTest.state().status === 'Connected'", timeout: 15),
                "\(rig.status) \(rig.trace)")
            try rig.page.evaluate("document.getElementById('hangup').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.status().startsWith('Ended: completed')", timeout: 10),
                "\(rig.status)")
            #expect(rig.unexpectedConsoleErrors.isEmpty, "\(rig.page.consoleErrors)")
        }

        /// The status line follows the gateway's events. The test swaps the gateway's answer
        /// for a plain RTP one on its way in (the page's code is not changed; a page may only
        /// offer WebRTC, so the offer goes as the browser made it): the gateway creates the
        /// session, the browser refuses the swapped answer, the page hangs up, and every status
        /// the events carry shows on the status line in order, down to the end reason.
        @Test(.timeLimit(.minutes(2)))
        func theStatusLineFollowsTheSessionsEvents() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10))
            let plainAnswer = GatewaySuites.PageTokenScopeTests.rtpOffer
                .replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
            try rig.page.evaluate(
                """
                window.statusLines = [];
                new MutationObserver(() => statusLines.push(irisgwTest.status()))
                  .observe(document.getElementById('status'), { childList: true, characterData: true, subtree: true });
                const realFetch = window.fetch;
                window.fetch = async (path, init) => {
                  const response = await realFetch(path, init);
                  if (path !== '/v1/sessions' || !init || init.method !== 'POST' || !response.ok) return response;
                  const body = await response.json();
                  body.media.sdp = "\(plainAnswer)";
                  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
                };
                document.getElementById('number').value = '+15550100003';  // rings until cancelled
                document.getElementById('call').click();
                """)
            #expect(
                try await rig.page.waitFor("irisgwTest.state().ended", timeout: 15),
                "\(rig.status) \(rig.trace) \(rig.state)")
            let state = rig.state
            #expect((state["answerSdp"] as? String)?.contains("RTP/AVP") == true, "\(state)")
            #expect(state["remoteDescriptionError"] is String, "the browser refuses a plain RTP answer: \(state)")
            let trace = rig.trace
            #expect(
                trace.first == "onSessionCreated" && trace.contains("onSessionSIPStatus:Initializing")
                    && trace.contains("onSessionSIPStatus:Disconnected") && trace.last == "onSessionEnded:canceled",
                "\(trace)")
            // Events that come in one batch (those before createWithTN's answer are replayed at
            // once) show only the last one's status: the line goes Initializing or Connecting,
            // then Disconnected, then the end, in that order.
            let lines = (try rig.page.evaluate("statusLines") as? [String]) ?? []
            let started = lines.firstIndex(where: { $0.hasPrefix("Initializing") || $0.hasPrefix("Connecting") })
            let disconnected = lines.firstIndex(where: { $0.hasPrefix("Disconnected") })
            let ended = lines.firstIndex(where: { $0.hasPrefix("Ended: canceled") })
            #expect(
                started != nil && disconnected != nil && ended != nil && started! < disconnected!
                    && disconnected! < ended!, "\(lines)")
            #expect(rig.status.hasPrefix("Ended: canceled (SIP 487"), "\(rig.status) \(lines)")
            _ = try rig.screenshot("status-ended")
            #expect(rig.unexpectedConsoleErrors.isEmpty, "\(rig.page.consoleErrors)")
        }

        /// An inbound call to `alice`: the page shows the caller; Reject answers the carrier 603.
        @Test(.timeLimit(.minutes(2)))
        func anIncomingCallShowsTheCallerAndRejectDeclinesIt() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10))
            let sipp = try GatewayInboundTests.caller(rig.gw, CallerScenarios.rejected(603))
            defer { sipp.stop() }
            #expect(
                try await rig.page.waitFor("irisgwTest.state().incoming", timeout: 10), "\(rig.trace) \(sipp.report)")
            #expect(try rig.page.evaluate("document.getElementById('incoming').hidden") as? Bool == false)
            #expect(
                try rig.page.evaluate("document.getElementById('incoming-caller').textContent") as? String
                    == "+15559876543")
            #expect(rig.status == "Incoming call from +15559876543")
            _ = try rig.screenshot("incoming")
            try rig.page.evaluate("document.getElementById('reject').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.status().startsWith('Rejected')", timeout: 10), "\(rig.status)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            #expect(rig.unexpectedConsoleErrors.isEmpty, "\(rig.page.consoleErrors)")
        }

        /// The carrier simulator calls alice's DID: the page shows the caller, Answer joins
        /// with the browser's offer, audio goes both ways (the simulator's 300 Hz reaches the
        /// browser, and its echo of the browser's 440 Hz comes back), the caller hangs up and
        /// the page shows the end.
        @Test(.timeLimit(.minutes(2)))
        func anIncomingCallIsAnsweredInTheBrowserWithAudioBothWays() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10))
            let caller = try GatewaySuites.GatewayCLITests.launch(
                [
                    "carrier-sim", "call", "+15550001000", "--from", "+15559876543", "--to",
                    "127.0.0.1:\(rig.gw.sipPort)",
                    "--hangup-after", "5", "--tone", "300"
                ], mergeErrors: true)
            defer { caller.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().incoming", timeout: 10), "\(rig.trace)")
            try rig.page.evaluate("document.getElementById('answer').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.state().status === 'Connected'", timeout: 15),
                "\(rig.status) \(rig.state)")
            #expect(
                try await rig.page.waitFor("irisgwTest.remoteToneLevel(300) > 0.05", timeout: 10),
                "the caller's 300 Hz: \(String(describing: try? rig.page.evaluate("irisgwTest.remoteToneLevel(300)")))")
            #expect(
                try await rig.page.waitFor("irisgwTest.remoteToneLevel(440) > 0.05", timeout: 10),
                "the browser's 440 Hz echoed by the caller: \(String(describing: try? rig.page.evaluate("irisgwTest.remoteToneLevel(440)")))"
            )
            #expect(
                try await rig.page.waitFor("irisgwTest.status().startsWith('Ended: completed')", timeout: 15),
                "\(rig.status) \(rig.trace)")
            let status = await caller.exit(timeout: 10)
            let text = caller.output
            #expect(status == 0 && text.contains("1 answered"), "\(text)")
            #expect(rig.unexpectedConsoleErrors.isEmpty, "\(rig.page.consoleErrors)")
        }

        /// DTMF both ways through a browser call: the simulator's DTMF number sends `1234#`,
        /// which the page sees as `onSessionDTMF`; a keypad press goes out as RFC 4733 and the
        /// simulator's echo of it comes back as `onSessionDTMF` too.
        @Test(.timeLimit(.minutes(2)))
        func keypadDigitsGoOutAndTheCarriersDigitsComeBack() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10))
            try rig.page.evaluate(
                "document.getElementById('number').value = '+15550100009'; document.getElementById('call').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.state().status === 'Connected'", timeout: 15),
                "\(rig.status) \(rig.trace)")
            let digits = "irisgwTest.events.filter(e => e.event === 'onSessionDTMF').map(e => e.digit).join('')"
            #expect(
                try await rig.page.waitFor("(\(digits)).startsWith('1234#')", timeout: 10),
                "\(String(describing: try? rig.page.evaluate(digits)))")
            try rig.page.evaluate("document.querySelector('[data-digit=\"7\"]').click()")
            #expect(
                try await rig.page.waitFor("(\(digits)).includes('7')", timeout: 10),
                "the keypad's 7 echoed: \(String(describing: try? rig.page.evaluate(digits)))")
            try rig.page.evaluate("document.getElementById('hangup').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.status().startsWith('Ended: completed')", timeout: 10),
                "\(rig.status)")
        }

        /// The whole call with audio over ICE-lite and DTLS-SRTP. The fake microphone's 440 Hz comes back through the
        /// simulator's echo; hold and unhold show on the status line; DTMF is accepted; mute
        /// silences the echo; hanging up ends `completed`.
        @Test(.timeLimit(.minutes(2)))
        func echoCallWithAudioHoldMuteDTMFAndHangUp() async throws {
            let rig = try await Rig()
            defer { rig.stop() }
            #expect(try await rig.page.waitFor("irisgwTest.state().eventsOpen", timeout: 10))
            try rig.page.evaluate(
                "document.getElementById('number').value = '+15550100001'; document.getElementById('call').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.state().status === 'Connected'", timeout: 15),
                "\(rig.status) \(rig.trace)")
            #expect(
                rig.state["remoteDescriptionError"] is NSNull || rig.state["remoteDescriptionError"] == nil,
                "\(rig.state)")
            #expect(
                try await rig.page.waitFor(
                    "irisgwTest.state().iceConnectionState === 'connected' || irisgwTest.state().iceConnectionState === 'completed'",
                    timeout: 10), "\(rig.state)")
            #expect(
                try await rig.page.waitFor("irisgwTest.localToneLevel(440) > 0.1", timeout: 5),
                "the fake microphone plays 440 Hz")
            #expect(
                try await rig.page.waitFor("irisgwTest.remoteToneLevel(440) > 0.05", timeout: 10),
                "440 Hz echoed: \(String(describing: try? rig.page.evaluate("irisgwTest.remoteToneLevel(440)")))")
            _ = try rig.screenshot("connected")

            try rig.page.evaluate("document.getElementById('hold').click()")
            #expect(try await rig.page.waitFor("irisgwTest.status().startsWith('Hold')", timeout: 10), "\(rig.status)")
            try rig.page.evaluate("document.getElementById('hold').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.status().startsWith('Connected')", timeout: 10), "\(rig.status)")

            try rig.page.evaluate("document.querySelector('[data-digit=\"5\"]').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.state().error === null", timeout: 2),
                "DTMF accepted: \(rig.state)")

            try rig.page.evaluate("document.getElementById('mute').click()")
            #expect(try await rig.page.waitFor("irisgwTest.remoteToneLevel(440) < 0.01", timeout: 5), "muted: no echo")
            try rig.page.evaluate("document.getElementById('mute').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.remoteToneLevel(440) > 0.05", timeout: 5),
                "unmuted: the echo again")

            try rig.page.evaluate("document.getElementById('hangup').click()")
            #expect(
                try await rig.page.waitFor("irisgwTest.status().startsWith('Ended: completed')", timeout: 10),
                "\(rig.status)")
            #expect(rig.unexpectedConsoleErrors.isEmpty, "\(rig.page.consoleErrors)")
        }
    }
}
