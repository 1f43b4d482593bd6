import Glibc
import IOCore

/// One call's media on its thread: a trunk leg and a platform leg, full duplex.
///
/// - Transcoding, plain bridge: while the network is calm a packet is decoded and
///   re-encoded for the other leg the moment it arrives (no playout delay; a single loss
///   is concealed from the next packet: Opus FEC, else PLC); jitter or reordering brings
///   the jitter buffer in for that direction until it is calm again (`ArrivalPlayout`).
/// - Transcoding through the buffer (jitter, and always while mixing a merged call): each
///   20 ms tick pops one frame per direction, decodes it (or conceals a loss: Opus FEC,
///   then PLC), and encodes it for the other leg.
/// - Passthrough (same codec both legs): packets are relayed as they arrive, with our SSRC
///   and sequence numbers, and no decode or encode.
/// - DTMF: RFC 4733 events are reported once and regenerated on the other leg; so are
///   in-band tones heard in the decoded audio of a leg configured for them.
/// Loop-confined; buffers are allocated once, so the per-packet path does not allocate.
final class CallPipeline {  // confined to its media thread: never Sendable, reached through its MediaThread
    let id: Int
    let configuration: MediaCallConfiguration
    let trunk: RTPLeg
    let platform: RTPLeg
    let passthrough: Bool
    let frameSamples: Int
    private let events: @Sendable (MediaEvent) -> Void
    private var timedOut = false
    /// RTP supervision: seconds without trunk RTP before `.timeout`, counted from the first
    /// packet (configuration) or from when the caller armed it (the answer), whichever is later.
    private var rtpTimeout: Double
    private var timeoutArmedAt: Double?
    /// RTCP CNAME (RFC 3550 §6.5.1): one per call, shared by both legs.
    let cname = "irisgw-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    /// Per-frame processing times (µs) go here; owned by the thread.
    // The thread owns its pipelines and drops them (on its loop) before it goes: the
    // reference cannot dangle, and skipping the unowned check saves work per frame.
    unowned(unsafe) var thread: MediaThread
    /// Set while the call is bridged with another into a three-way call; the host runs it.
    var conference: MediaConference?
    /// The call's decoded audio for its sinks, and the source that replaces the platform leg
    /// (nil until the first is added); carried over from the pipeline this one replaces.
    var audio: CallAudioTap?

    /// `previous`: the call's pipeline this one replaces (new codecs, a move to another
    /// thread); its sockets carry over.
    init(
        id: Int, configuration: MediaCallConfiguration, host: String, trunkPorts: RTPPortPair,
        platformPorts: RTPPortPair,
        thread: MediaThread, events: @escaping @Sendable (MediaEvent) -> Void, replacing previous: CallPipeline? = nil
    ) throws {
        self.id = id
        self.configuration = configuration
        self.thread = thread
        self.events = events
        audio = previous?.audio
        // A call whose audio is tapped transcodes: its sinks need the decoded frames.
        passthrough = configuration.isPassthrough && (previous?.audio?.isEmpty ?? true)
        rtpTimeout = configuration.rtpTimeout
        // Wideband on both legs runs at 16 kHz; everything else at 8 kHz.
        let rate = configuration.callSampleRate
        frameSamples = rate / 50
        trunk = try RTPLeg(
            kind: .trunk, configuration: configuration.trunk, host: host, ports: trunkPorts,
            callSampleRate: rate, outputClockRate: configuration.platform.codec.rtpClockRate, transcoding: !passthrough,
            onArrival: configuration.playoutOnArrival, calmPeriod: configuration.playoutCalmPeriod,
            sockets: previous.map { ($0.trunk.socket, $0.trunk.rtcpSocket) }, previous: previous?.trunk)
        platform = try RTPLeg(
            kind: .platform, configuration: configuration.platform, host: host, ports: platformPorts,
            callSampleRate: rate, outputClockRate: configuration.trunk.codec.rtpClockRate, transcoding: !passthrough,
            onArrival: configuration.playoutOnArrival, calmPeriod: configuration.playoutCalmPeriod,
            sockets: previous.map { ($0.platform.socket, $0.platform.rtcpSocket) }, previous: previous?.platform)
        trunk.tap = configuration.trunkTap
    }

    func leg(_ which: MediaLeg) -> RTPLeg { which == .trunk ? trunk : platform }

    // MARK: Receive

    /// Reads one datagram from a leg's socket (called when epoll says it is readable). One
    /// per wake-up: epoll is level-triggered, so another waiting packet wakes us again, and
    /// we save the extra `recvfrom` that would only return EAGAIN (packets come 20 ms apart).
    func readable(_ which: MediaLeg) {
        let leg = self.leg(which)
        var age = 0.0
        if let wire = leg.socket.receive(into: leg.rxBuffer, from: &leg.source, age: &age) {
            received(which, length: wire, age: age)
        }
    }

    /// A datagram the thread's ring received for `which` (UDPRing): copied where `readable`
    /// reads to, then the same path. `age`: seconds since the kernel had it.
    func arrived(
        _ which: MediaLeg, _ datagram: UnsafeRawBufferPointer, from: UnsafePointer<sockaddr>, length: socklen_t,
        age: Double
    ) {
        let leg = self.leg(which)
        guard let wire = leg.take(datagram, from: from, length: length, into: &leg.source) else { return }
        received(which, length: wire, age: age)
    }

    /// The datagram of `wire` bytes in the leg's `rxBuffer`, from `leg.source`.
    private func received(_ which: MediaLeg, length wire: Int, age: Double) {
        let leg = self.leg(which)
        let other = leg === trunk ? platform : trunk
        // `start` times our work; `arrival` is when the kernel had the packet, so a
        // thread that reads late does not take its own delay for network jitter.
        let start = EventLoop.now()
        let arrival = start - min(age, 1)
        // Until the peer's SDP has named it, a leg has no peer: what arrives is dropped, so
        // it cannot latch symmetric RTP and draw our media (an SRTP leg-to-be would answer
        // in clear) or be played before we know what it is.
        // A WebRTC leg demultiplexes first (RFC 7983): STUN and DTLS stop here, SRTP and
        // SRTCP (rtcp-mux) go on once DTLS has keyed the leg; ICE has checked the source.
        if let path = leg.webrtc {
            guard leg.receiveWebRTC(path, length: wire, now: start) else { return }
            if leg.isMuxedRTCP(length: wire) {
                leg.rtcpSource = leg.source
                leg.handleRTCP(length: wire, now: start)
                return
            }
        } else if leg.configuration.remote == nil {
            leg.statistics.beforeSDP += 1
            return
        }
        // SRTP first: a packet that does not authenticate is dropped before it can move
        // the source policy, count as received, or be played or relayed.
        var n = wire
        if let srtp = leg.srtp {
            guard let plain = leg.unprotectReceived(srtp, length: wire, rtcp: false) else { return }
            n = plain
        }
        let packet = UnsafeRawBufferPointer(rebasing: leg.rxBuffer[0..<n])
        guard let view = try? RTPPacketView.parse(packet) else {
            leg.statistics.malformed += 1
            return
        }
        let isEvent = leg.configuration.telephoneEventPayloadType == view.payloadType
        let negotiated = isEvent || view.payloadType == leg.configuration.payloadType || view.payloadType == 13
        // Only the peer speaks into the call: a packet from anyone else is dropped here,
        // before it is tapped, counted, played, relayed or read as a digit, and it does not
        // keep the media timer alive. Only our payload types may latch a new address (an
        // RTCP packet or a stray stream sent to the RTP port must not draw our audio).
        if leg.webrtc == nil, leg.configuration.checksSources,
            !leg.admitSource(ssrc: view.ssrc, eligible: negotiated, now: start)
        {
            return
        }
        if leg.tap != nil {
            leg.tapPacket(packet, sent: false, rtcp: false, local: leg.socket.local, remote: leg.source)
        }
        guard negotiated else {
            leg.statistics.otherPayloadTypes += 1
            leg.statistics.lastOtherPayloadType = view.payloadType
            return
        }
        if leg.markReceived(now: start, bytes: wire) { events(.firstPacket(which)) }
        _ = leg.rx.record(view, arrival: arrival, sampledTimestamp: !isEvent)
        let payload = view.payload(in: packet)
        if let te = leg.configuration.telephoneEventPayloadType, view.payloadType == te {
            leg.playout.skip(sequenceNumber: view.sequenceNumber, ssrc: view.ssrc)
            if let report = try? TelephoneEvent.parse(payload) {
                handle(
                    leg.dtmfIn.receive(
                        report, timestamp: view.timestamp, sequenceNumber: view.sequenceNumber, now: start),
                    on: which, now: start)
            }
            return
        }
        // Audio, or RFC 3389 comfort noise (the jitter buffer treats it as a talkspurt end).
        guard view.payloadType == leg.configuration.payloadType || (view.payloadType == 13 && !passthrough) else {
            return
        }
        if passthrough {
            if !leg.muted {
                other.relay(
                    payload: payload, sourceSSRC: view.ssrc, sourceTimestamp: view.timestamp, marker: view.marker,
                    now: start)
            }
            thread.record(microseconds: (EventLoop.now() - start) * 1e6)
            return
        }
        let wasOnArrival = leg.playout.mode == .arrival
        let decision = leg.playout.arrived(
            sequenceNumber: view.sequenceNumber, timestamp: view.timestamp, ssrc: view.ssrc,
            arrival: arrival, continuingAt: other.timestamp, forceBuffered: conference != nil)
        if wasOnArrival, leg.playout.mode == .buffered { leg.awaitingBuffer = true }
        switch decision {
        case .buffer:
            let outcome = leg.jitter.insert(
                JitterBuffer.Packet(
                    sequenceNumber: view.sequenceNumber, timestamp: view.timestamp,
                    marker: view.marker, ssrc: view.ssrc, payloadType: view.payloadType),
                payload: payload, arrival: arrival)
            if outcome == .late { leg.statistics.late += 1 }
        case .late:
            leg.statistics.late += 1
        case .duplicate:
            break
        case .play(let ts, let lost):
            if view.payloadType == 13 {
                // The sender went quiet: the filler frames over its silence are noise at
                // the level it asked for.
                if let cn = try? ComfortNoisePayload.parse(Array(payload)) { leg.comfortNoise.update(with: cn) }
                leg.comfortNoiseActive = true
                return
            }
            playOnArrival(leg, to: other, payload: payload, at: ts, lost: lost, now: start)
            thread.record(microseconds: (EventLoop.now() - start) * 1e6)
        }
    }

    // MARK: On arrival

    /// Decodes a packet the moment it arrives and sends what it completes to `dst`: a
    /// partial frame left by an earlier packet is finished first (padded with concealment
    /// when this packet does not continue it), and a single lost packet just before this one
    /// is concealed from it (Opus FEC, else PLC).
    private func playOnArrival(
        _ src: RTPLeg, to dst: RTPLeg, payload: UnsafeRawBufferPointer, at ts: UInt32, lost: Int, now: Double
    ) {
        guard let decoder = src.codec, dst.codec != nil else { return }
        // Audio again: a run of fillers over a silence ends.
        src.fillerRun = 0
        src.comfortNoiseActive = false
        let bytes = payload.bindMemory(to: UInt8.self)
        let step = Int(dst.timestampStep)
        if src.decodedCount > 0, ts != src.pendingTimestamp &+ UInt32(src.decodedCount * step / frameSamples) {
            finishPartialFrame(from: src, to: dst, decoder: decoder, now: now)
        }
        if src.decodedCount == 0 {
            src.pendingTimestamp = ts
            if lost == 1 {
                src.statistics.concealed += 1
                src.pendingTimestamp = ts &- UInt32(step)
                let frame = UnsafeMutableBufferPointer(rebasing: src.decoded[0..<frameSamples])
                if decoder.conceal(next: bytes, into: frame) < frameSamples { frame.update(repeating: 0) }
                src.decodedCount = frameSamples
                emitFrame(from: src, to: dst, concealed: true, now: now)
            }
        }
        var produced = decoder.decode(
            bytes, into: UnsafeMutableBufferPointer(rebasing: src.decoded[src.decodedCount...]))
        if produced <= 0 {
            // A payload that did not decode: a frame of silence keeps the timeline.
            UnsafeMutableBufferPointer(rebasing: src.decoded[src.decodedCount..<(src.decodedCount + frameSamples)])
                .update(repeating: 0)
            produced = frameSamples
        }
        src.decodedCount += produced
        while src.decodedCount >= frameSamples { emitFrame(from: src, to: dst, concealed: false, now: now) }
    }

    /// Sends the first frame of `src.decoded` to `dst` at `src.pendingTimestamp`.
    private func emitFrame(from src: RTPLeg, to dst: RTPLeg, concealed: Bool, now: Double) {
        let frame = UnsafeMutableBufferPointer(rebasing: src.decoded[0..<frameSamples])
        finishFrame(frame, of: src, concealed: concealed)
        pushFrame(UnsafeBufferPointer(frame), to: dst, at: src.pendingTimestamp, now: now)
        src.pendingTimestamp &+= dst.timestampStep
        src.consumeDecoded(frameSamples)
        src.lastEmit = now
    }

    /// Pads the rest of a packet longer than a frame (left in `src.decoded`) with
    /// concealment and sends that frame: what followed it did not come, or not in line.
    private func finishPartialFrame(from src: RTPLeg, to dst: RTPLeg, decoder: LegCodec, now: Double) {
        let rest = UnsafeMutableBufferPointer(rebasing: src.decoded[src.decodedCount..<frameSamples])
        if decoder.conceal(next: nil, into: rest) < rest.count { rest.update(repeating: 0) }
        src.decodedCount = frameSamples
        emitFrame(from: src, to: dst, concealed: true, now: now)
    }

    /// On arrival, when `src` has sent nothing for three frames (a loss burst, DTX, comfort
    /// noise): one frame of concealment (the first three), comfort noise or silence, so the
    /// far side's stream goes on; the next packet continues after it.
    private func fillSilence(from src: RTPLeg, to dst: RTPLeg, now: Double) {
        guard let decoder = src.codec, src.sawFirstPacket, now - src.lastEmit >= 0.060 else { return }
        if src.decodedCount > 0 {
            // The rest of a packet longer than a frame: finish that frame first.
            finishPartialFrame(from: src, to: dst, decoder: decoder, now: now)
            src.playout.reanchor()
            return
        }
        let frame = UnsafeMutableBufferPointer(rebasing: src.decoded[0..<frameSamples])
        var concealed = false
        if src.comfortNoiseActive {
            src.comfortNoise.nextFrame(into: frame)
        } else if src.fillerRun < 3, decoder.conceal(next: nil, into: frame) == frameSamples {
            concealed = true
        } else {
            frame.update(repeating: 0)
        }
        src.decodedCount = frameSamples
        src.pendingTimestamp = dst.timestamp
        emitFrame(from: src, to: dst, concealed: concealed, now: now)
        src.fillerRun += 1
        src.playout.reanchor()
    }

    /// Reports each digit that ended and regenerates it toward the other leg, within the
    /// leg's rate (DTMFRateLimit) and the other leg's queue bound; what is over is dropped
    /// and counted.
    private func handle(_ dtmf: DTMFEvents, on which: MediaLeg, now: Double) {
        let src = leg(which)
        for event in dtmf {
            guard case .ended(let digit, let ms) = event else { continue }
            guard src.dtmfLimit.allow(now: now) else {
                src.statistics.dtmfDropped += 1
                continue
            }
            src.statistics.dtmfDigits += 1
            events(.dtmf(which, digit: digit.character, durationMs: ms))
            // Regenerate the digit toward the other side when it takes RFC 4733.
            let other = leg(which.other)
            if other.configuration.telephoneEventPayloadType != nil {
                do { try other.dtmfOut.enqueue(String(digit.character), durationMs: max(ms, 60)) } catch {
                    src.statistics.dtmfDropped += 1
                }
            }
        }
    }

    // MARK: Tick

    /// One 20 ms playout step: both directions, DTMF, timeouts, RTCP. `missed`: ticks the
    /// thread could not run in time; buffered streams catch up on them.
    func tick(now: Double, missed: Int = 0) {
        if let conference {
            if conference.host === self { conference.tick(now: now) }
        } else if !passthrough {
            playout(from: trunk, to: platform, now: now, missed: missed)
            if let source = audio?.source {
                playSource(source, now: now)
            } else {
                playout(from: platform, to: trunk, now: now, missed: missed)
            }
        }
        audio?.tick()
        trunk.tickDTMF(now: now)
        platform.tickDTMF(now: now)
        handle(trunk.dtmfIn.tick(now: now), on: .trunk, now: now)
        handle(platform.dtmfIn.tick(now: now), on: .platform, now: now)
        for leg in [trunk, platform] {
            if let path = leg.webrtc, let event = leg.tickWebRTC(path, now: now) { events(event) }
        }
        trunk.tickRTCP(now: now, cname: cname, interval: configuration.rtcpInterval)
        platform.tickRTCP(now: now, cname: cname, interval: configuration.rtcpInterval)
        if rtpTimeout > 0, !timedOut, let since = supervisedSince, now - since > rtpTimeout {
            timedOut = true
            events(.timeout(.trunk))
        }
    }

    /// One direction's tick: a buffered stream plays its next frame (or returns to arrival
    /// after a calm spell, dropping the delay its buffer held); a stream on arrival only
    /// fills silences.
    private func playout(from src: RTPLeg, to dst: RTPLeg, now: Double, missed: Int) {
        guard src.playout.mode == .buffered else { return fillSilence(from: src, to: dst, now: now) }
        if src.playout.shouldReturnToArrival(now: now) {
            src.statistics.staleDropped += src.jitter.statistics.depthMilliseconds / 20
            src.jitter.reset()
            src.decodedCount = 0
            src.awaitingBuffer = false
            src.lastEmit = now
            return
        }
        // Ticks missed in a stall left their frames in the buffer (the packets were read
        // late too): they are played two to a tick until the depth is back at its target,
        // so the stall does not stay on as delay, and nothing is dropped.
        src.catchUp = min(src.catchUp + missed, 50)
        transcode(from: src, to: dst, now: now)
        if src.catchUp > 0 {
            src.catchUp -= 1
            if src.jitter.depth - src.jitter.targetDelay >= src.jitter.frameDuration {
                transcode(from: src, to: dst, now: now)
                src.statistics.caughtUp += 1
            }
        }
    }

    private func transcode(from src: RTPLeg, to dst: RTPLeg, now: Double) {
        guard src.codec != nil, dst.codec != nil else { return }
        let start = EventLoop.now()
        guard let frame = pullFrame(src, now: now) else { return }
        pushFrame(UnsafeBufferPointer(frame), to: dst, now: now)
        src.consumeDecoded(frameSamples)
        thread.record(microseconds: (EventLoop.now() - start) * 1e6)
    }

    /// Decodes (or conceals) one 20 ms frame of what `src` received into the front of
    /// `src.decoded`, runs in-band DTMF detection on it and applies the leg's mute. nil when
    /// there is nothing to play yet (before the first packet). The caller consumes the frame
    /// with `src.consumeDecoded(frameSamples)` once it is used.
    func pullFrame(_ src: RTPLeg, now: Double) -> UnsafeMutableBufferPointer<Int16>? {
        guard let decoder = src.codec else { return nil }
        var lost = false
        // A packet may hold more than 20 ms (30 ms from some carriers, 40 or 60 ms of Opus):
        // it is decoded whole and played out over the next ticks.
        while src.decodedCount < frameSamples {
            let space = UnsafeMutableBufferPointer(rebasing: src.decoded[src.decodedCount...])
            var produced = 0
            switch src.jitter.pop(now: now) {
            case .frame(let f) where f.payloadType == 13:
                // Comfort noise (RFC 3389): noise at the level the sender asked for, to the
                // end of this frame.
                src.jitter.withPayload(of: f) { p in
                    if let cn = try? ComfortNoisePayload.parse(Array(p)) { src.comfortNoise.update(with: cn) }
                }
                produced = frameSamples - src.decodedCount
                src.comfortNoise.nextFrame(
                    into: UnsafeMutableBufferPointer(rebasing: space[..<(space.startIndex + produced)]))
            case .frame(let f):
                src.awaitingBuffer = false
                produced = src.jitter.withPayload(of: f) { p in
                    decoder.decode(p.assumingMemoryBound(to: UInt8.self), into: space)
                }
            case .conceal(let next):
                src.statistics.concealed += 1
                lost = true
                if let next {
                    produced = src.jitter.withPayload(of: next) { p in
                        decoder.conceal(next: p.assumingMemoryBound(to: UInt8.self), into: space)
                    }
                } else {
                    produced = decoder.conceal(next: nil, into: space)
                }
            case .silence:
                // Nothing to play: before the first packet send nothing; later keep the stream
                // going with silence so the far jitter buffer stays primed.
                guard src.sawFirstPacket, !src.awaitingBuffer else { return nil }
            }
            if produced <= 0 {
                // Silence, or a payload that did not decode: pad out the frame.
                UnsafeMutableBufferPointer(rebasing: src.decoded[src.decodedCount..<frameSamples]).update(repeating: 0)
                produced = frameSamples - src.decodedCount
            }
            src.decodedCount += produced
        }
        let frame = UnsafeMutableBufferPointer(rebasing: src.decoded[0..<frameSamples])
        finishFrame(frame, of: src, concealed: lost)
        return frame
    }

    /// What every decoded frame goes through before it is used: in-band DTMF detection (a
    /// concealed frame is a guess: the detector is told of the loss instead), then mute.
    private func finishFrame(_ frame: UnsafeMutableBufferPointer<Int16>, of src: RTPLeg, concealed: Bool) {
        if let inband = src.inband {
            handle(
                concealed ? inband.frameLost(count: InbandDTMF.sampleRate / 50) : src.detectInband(frame), on: src.kind,
                now: EventLoop.now())
        }
        if src.muted { frame.update(repeating: 0) }
    }

    /// One frame from the audio source (a voice agent) to the trunk, in place of the platform
    /// leg's audio: silence when it has none, so the carrier's stream goes on.
    private func playSource(_ source: any MediaAudioSource, now: Double) {
        guard let audio, trunk.codec != nil else { return }
        audio.withSourceFrame(frameSamples) { frame in
            if !source.mediaAudioFrame(into: frame, sampleRate: frameSamples * 50) { frame.update(repeating: 0) }
            if platform.muted { frame.update(repeating: 0) }
            pushFrame(UnsafeBufferPointer(frame), to: trunk, now: now)
        }
    }

    /// Encodes one frame for `dst` and sends it (at timestamp `ts` when given, else at the
    /// leg's next). Audio sinks get a copy first; a platform leg replaced by an audio source
    /// sends nothing.
    func pushFrame(_ frame: UnsafeBufferPointer<Int16>, to dst: RTPLeg, at timestamp: UInt32? = nil, now: Double) {
        if let audio {
            audio.captured(frame, track: dst === trunk ? .outbound : .inbound)
            if dst === platform, audio.source != nil { return }
        }
        guard let encoder = dst.codec else { return }
        let ts = timestamp ?? dst.timestamp
        let out = UnsafeMutableRawBufferPointer(rebasing: dst.txBuffer[12..<1500]).bindMemory(to: UInt8.self)
        let size = encoder.encode(frame, into: out)
        guard size > 0 else { return }
        if size <= 2, dst.dtx {
            // Opus DTX (RFC 7587 §3.1.3): a 1-2 byte frame is silence the encoder wants left
            // unsent; the timestamps move on, so the far side sees the gap it expects.
            dst.timestamp = ts &+ dst.timestampStep
            return
        }
        dst.sendAudio(payloadLength: size, at: ts, now: now)
    }

    /// Starts RTP supervision now even if no packet came yet (a call the carrier answered
    /// but sends nothing on).
    func armTimeout(_ seconds: Double, now: Double) {
        rtpTimeout = seconds
        timeoutArmedAt = now
    }

    private var supervisedSince: Double? {
        let last = trunk.sawFirstPacket ? trunk.lastPacketAt : nil
        switch (last, timeoutArmedAt) {
        case (let l?, let a?): return max(l, a)
        case (let l?, nil): return l
        case (nil, let a?): return a
        case (nil, nil): return nil
        }
    }

    private func playoutState(_ leg: RTPLeg) -> MediaPlayout {
        if passthrough { return .relay }
        if conference != nil { return .mixing }
        return leg.playout.mode == .arrival ? .arrival : .buffered
    }

    func snapshot() -> [MediaLeg: MediaLegStatistics] {
        var t = trunk.statistics, p = platform.statistics
        t.packetsLost = trunk.rx.cumulativeLost
        t.jitterMs = trunk.rx.jitterMilliseconds
        p.packetsLost = platform.rx.cumulativeLost
        p.jitterMs = platform.rx.jitterMilliseconds
        t.remote = t.remote ?? trunk.configuration.remote
        p.remote = p.remote ?? platform.configuration.remote
        t.bufferMs = trunk.playout.mode == .buffered ? trunk.jitter.statistics.depthMilliseconds : 0
        p.bufferMs = platform.playout.mode == .buffered ? platform.jitter.statistics.depthMilliseconds : 0
        t.playout = playoutState(trunk)
        p.playout = playoutState(platform)
        t.playoutSwitches = trunk.playout.switches
        p.playoutSwitches = platform.playout.switches
        return [.trunk: t, .platform: p]
    }
}
