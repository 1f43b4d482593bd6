import Glibc
import IOCore

/// One leg of a call on its media thread: sockets, addressing (symmetric RTP), RTP
/// sequencing, receive statistics, jitter buffer, codec and DTMF state. Buffers are
/// allocated once here; nothing on the per-packet path allocates. Loop-confined.
final class RTPLeg {  // confined to its media thread with its pipeline
    let kind: MediaLeg
    var configuration: MediaLegConfiguration
    let socket: UDPSocket
    let rtcpSocket: UDPSocket
    let ports: RTPPortPair

    /// Where packets go: the SDP address until the peer's real source is latched (on a
    /// WebRTC leg: the pair ICE nominated, nothing before).
    var remote: RawSocketAddress?
    /// Which sources may speak into the RTP and the RTCP socket of a plain (or SDES) leg
    /// (RTPSourcePolicy.swift); a WebRTC leg takes media only from the pair ICE selected.
    var sourcePolicy: RTPSourcePolicy<SocketEndpoint>
    var rtcpSourcePolicy: RTPSourcePolicy<SocketEndpoint>
    /// Where the peer's RTCP comes from, once the RTCP policy latched it (our reports go there).
    var rtcpRemote: RawSocketAddress?
    /// How many RFC 4733 and in-band digits may be reported, and how fast.
    var dtmfLimit: DTMFRateLimit
    private(set) var lastPacketAt: Double = 0
    private(set) var sawFirstPacket = false
    var muted = false
    /// Gets a copy of every packet (MediaPacketTap.swift); nil for nearly every leg.
    var tap: (any MediaPacketTap)?
    /// Where the last RTCP packet came from (the RTP source, for muxed RTCP).
    var rtcpSource: RawSocketAddress?

    // Sending side.
    let ssrc = UInt32.random(in: 1...UInt32.max)
    private(set) var sequence = UInt16.random(in: 0...UInt16.max)
    /// The next audio frame's timestamp (a frame played on arrival sets it from the input's).
    var timestamp = UInt32.random(in: 0...UInt32.max)
    private var sentFirst = false
    private var sentAudioSinceTick = false
    /// Passthrough: our timestamp minus the source's, fixed at the first relayed packet.
    private var relayOffset: UInt32?
    private var relaySSRC: UInt32?
    var tx: RTPSenderStatistics

    // Receiving side.
    var rx: RTPReceiverStatistics
    var jitter: JitterBuffer
    /// On arrival or through `jitter` (a transcoded plain bridge; see ArrivalPlayout).
    var playout: ArrivalPlayout
    /// On arrival: the other leg's timestamp for `decoded[0]`, when the last frame from this
    /// leg went out, filler frames sent in a row over a silence, and whether the sender
    /// announced the silence with comfort noise (RFC 3389).
    var pendingTimestamp: UInt32 = 0
    var lastEmit = 0.0
    var fillerRun = 0
    var comfortNoiseActive = false
    /// Set when the stream moves from arrival to the buffer: until the buffer gives its
    /// first frame, ticks send nothing (no silence is inserted into a running stream).
    var awaitingBuffer = false
    /// Ticks the thread missed that this stream may still make up (see CallPipeline.playout).
    var catchUp = 0
    let codec: LegCodec?
    var dtmfIn = DTMFReceiver()
    var dtmfOut: DTMFSender
    /// In-band DTMF detection on the decoded audio, when configured (transcoding only).
    let inband: InbandDTMF?
    var statistics = MediaLegStatistics()
    var lastRTCP: Double = 0
    var comfortNoise = ComfortNoiseGenerator(seed: 1)
    /// SRTP/SRTCP sessions when the leg is keyed (`configuration.srtp`); nil is plain RTP.
    /// A rebuilt pipeline makes new ones: new keys from a re-INVITE, and with the same keys
    /// a new SSRC, so no (SSRC, index) pair is ever encrypted twice.
    /// On a WebRTC leg, set when the DTLS handshake has keyed it.
    var srtp: SRTPSession?
    /// ICE-lite and DTLS-SRTP when the leg is WebRTC (`configuration.webrtc`).
    let webrtc: WebRTCPath?

    /// The media thread's io_uring when it has one (set while attached): sends are queued
    /// there and go out with the thread's next wait, a batch in one system call.
    unowned(unsafe) var ring: UDPRing?

    /// Scratch buffers, sized once.
    let rxBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    let txBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    /// One 20 ms frame at 8 kHz for the in-band detector (a wideband call's frame halved).
    let inbandFrame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: InbandDTMF.sampleRate / 50)
    /// Decoded PCM not played yet (the rest of a packet longer than 20 ms), from index 0.
    let decoded = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 5760)
    var decodedCount = 0
    var source = RawSocketAddress()

    /// Opus with DTX on: silent frames are not sent.
    var dtx: Bool {
        if case .opus(let s) = configuration.codec { return s.dtx }
        return false
    }

    /// RTP timestamp units per 20 ms frame.
    var timestampStep: UInt32 { UInt32(configuration.codec.rtpClockRate / 50) }

    /// Binds the leg's RTP and RTCP ports, or takes over `sockets` already bound to them (a
    /// rebuilt pipeline keeps its sockets: no window in which the ports are free).
    /// `previous`: the leg this one replaces in a rebuilt pipeline; a WebRTC leg takes over
    /// its ICE pair, DTLS association and SRTP keys (a codec change must not redo them).
    /// `outputClockRate`: the RTP clock of the other leg, where this leg's audio goes.
    init(
        kind: MediaLeg, configuration: MediaLegConfiguration, host: String, ports: RTPPortPair,
        callSampleRate: Int, outputClockRate: Int, transcoding: Bool, onArrival: Bool = true, calmPeriod: Double = 4,
        sockets: (UDPSocket, UDPSocket)? = nil, previous: RTPLeg? = nil
    ) throws {
        self.kind = kind
        self.configuration = configuration
        // A rebuilt pipeline (new codecs, a merge) keeps what the policies learned; a new
        // address from signalling starts them over (setRemote below).
        sourcePolicy = previous?.sourcePolicy ?? RTPSourcePolicy(configuration: configuration.sourcePolicy)
        rtcpSourcePolicy = previous?.rtcpSourcePolicy ?? RTPSourcePolicy(configuration: configuration.rtcpSourcePolicy)
        rtcpRemote = previous?.rtcpRemote
        dtmfLimit = previous?.dtmfLimit ?? DTMFRateLimit(configuration.dtmfRate)
        self.ports = ports
        if let sockets {
            (socket, rtcpSocket) = sockets
        } else {
            socket = try UDPSocket(bind: SocketAddress(host: host, port: Int(ports.rtp)))
            socket.enableReceiveTimestamps()
            rtcpSocket = try UDPSocket(bind: SocketAddress(host: host, port: Int(ports.rtcp)))
        }
        let clock = configuration.codec.rtpClockRate
        // 32 frames (640 ms at 20 ms) is well above the 200 ms delay cap; slots sized for the
        // codec (G.711/G.722: 40 ms; Opus voice: up to 256 kbit/s) keep a call's memory small.
        let slot: Int
        if case .opus = configuration.codec { slot = 640 } else { slot = 320 }
        jitter = JitterBuffer(
            configuration: JitterBufferConfiguration(clockRate: clock, capacity: 32, maxPayloadSize: slot))
        playout = ArrivalPlayout(
            .init(clockRate: clock, outputClockRate: outputClockRate, calmPeriod: calmPeriod), onArrival: onArrival)
        codec = transcoding ? try LegCodec(configuration.codec, sampleRate: callSampleRate) : nil
        rx = RTPReceiverStatistics(clockRate: clock)
        tx = RTPSenderStatistics(ssrc: ssrc, clockRate: clock)
        dtmfIn = DTMFReceiver(configuration: .init(clockRate: 8000))
        dtmfOut = DTMFSender(
            configuration: .init(clockRate: configuration.codec.rtpClockRate, maxQueued: configuration.dtmfQueueLimit))
        inband = transcoding && configuration.inbandDTMF ? try InbandDTMF() : nil
        inbandFrame.initialize(repeating: 0)
        decoded.initialize(repeating: 0)
        if let w = configuration.webrtc {
            if let previous, let path = previous.webrtc {
                webrtc = path
                srtp = previous.srtp
                remote = previous.remote
            } else {
                webrtc = try WebRTCPath(w, now: EventLoop.now())
                srtp = nil
            }
        } else {
            webrtc = nil
            srtp = try configuration.srtp.map { try SRTPSession($0) }
            if let r = configuration.remote {
                if let previous, RawSocketAddress(r)?.endpoint == sourcePolicy.signalledAddress {
                    remote = previous.remote  // the same peer: what was latched stays
                } else {
                    setRemote(r)
                }
            }
        }
    }

    deinit {
        rxBuffer.deallocate()
        txBuffer.deallocate()
        inbandFrame.deallocate()
        decoded.deallocate()
    }

    /// Drops the first `count` samples of `decoded` (played), moving the rest to the front.
    func consumeDecoded(_ count: Int) {
        let rest = decodedCount - count
        // Forward copy: the regions may overlap, the destination first.
        for i in 0..<max(rest, 0) { decoded[i] = decoded[count + i] }
        decodedCount = max(rest, 0)
    }

    /// Runs one decoded frame (at the call's rate) through the in-band detector; a
    /// wideband frame is averaged down to 8 kHz, enough for tones below 1.7 kHz.
    func detectInband(_ frame: UnsafeMutableBufferPointer<Int16>) -> DTMFEvents {
        guard let inband else { return DTMFEvents() }
        let step = max(frame.count / inbandFrame.count, 1)
        let count = min(frame.count / step, inbandFrame.count)
        for i in 0..<count {
            var sum = 0
            for j in 0..<step { sum += Int(frame[i * step + j]) }
            inbandFrame[i] = Int16(sum / step)
        }
        return inband.process(UnsafeBufferPointer(rebasing: inbandFrame[0..<count]))
    }

    /// An offer/answer: the peer's SDP names `address` (RTCP at the next port). Our packets go
    /// there until the peer's source latches, and a new learning window opens (RTPSourcePolicy).
    func setRemote(_ address: SocketAddress) {
        configuration.remote = address
        let rtp = RawSocketAddress(address)
        sourcePolicy.signallingChanged(address: rtp?.endpoint)
        let rtcp =
            address.port < 65535 ? RawSocketAddress(SocketAddress(host: address.host, port: address.port + 1)) : nil
        rtcpSourcePolicy.signallingChanged(address: rtcp?.endpoint)
        if rtcpSourcePolicy.latchedAddress == nil { rtcpRemote = nil }
        // The latch is kept when the address is the same (`remote` is already there).
        if sourcePolicy.latchedAddress == nil { remote = rtp }
    }

    /// The source policy's verdict on the RTP packet just read from `source`: true to go on;
    /// false when it must be dropped unplayed, uncounted and untapped (counted as such).
    /// `eligible`: a payload type this leg negotiated (only those may latch a new address).
    @inline(__always)
    func admitSource(ssrc: UInt32, eligible: Bool, now: Double) -> Bool {
        guard let from = source.endpoint else {
            statistics.sourceDropped += 1
            return false
        }
        switch sourcePolicy.packetReceived(from: from, ssrc: ssrc, eligible: eligible, now: now) {
        case .accept:
            return true
        case .latched:
            remote = source
            statistics.remote = source.address
            return true
        case .drop:
            statistics.sourceDropped += 1
            return false
        }
    }

    /// SRTP: authenticates and decrypts the `length` bytes in `rxBuffer` in place; the plain
    /// length, or nil when the packet is dropped (counted by why).
    @inline(__always)
    func unprotectReceived(_ srtp: SRTPSession, length: Int, rtcp: Bool) -> Int? {
        let result = rtcp ? srtp.unprotectRTCP(rxBuffer, length: length) : srtp.unprotectRTP(rxBuffer, length: length)
        switch result {
        case .ok(let n): return n
        case .authenticationFailed: statistics.srtpAuthFailures += 1
        case .replayed: statistics.srtpReplays += 1
        case .failed: statistics.malformed += 1
        }
        return nil
    }

    @inline(__always)
    func markReceived(now: Double, bytes: Int) -> Bool {
        let first = !sawFirstPacket
        sawFirstPacket = true
        lastPacketAt = now
        statistics.packetsReceived += 1
        statistics.bytesReceived += bytes
        return first
    }

    /// Sends one datagram from `socket`: queued on the thread's ring, else at once.
    @inline(__always)
    @discardableResult
    func transmit(_ bytes: UnsafeRawBufferPointer, on socket: UDPSocket, to: RawSocketAddress) -> Bool {
        if let ring { return ring.send(bytes, on: socket, to: to) }
        return socket.send(bytes, to: to)
    }

    /// Takes a datagram the ring received into `rxBuffer` and its source into `address`;
    /// its length, or nil when it does not fit (counted as malformed).
    @inline(__always)
    func take(
        _ datagram: UnsafeRawBufferPointer, from: UnsafePointer<sockaddr>, length: socklen_t,
        into address: inout RawSocketAddress
    ) -> Int? {
        guard datagram.count <= rxBuffer.count else {
            statistics.malformed += 1
            return nil
        }
        if let base = datagram.baseAddress { rxBuffer.baseAddress!.copyMemory(from: base, byteCount: datagram.count) }
        address.set(from, length: length)
        return datagram.count
    }

    /// Writes our RTP header into `txBuffer` and sends header + `payloadLength` bytes already
    /// placed after it. `timestampOverride` is for relayed and telephone-event packets.
    @inline(__always)
    func send(payloadLength: Int, payloadType: UInt8, marker: Bool, timestamp ts: UInt32, now: Double) {
        guard let remote else { return }
        // A WebRTC leg sends only SRTP: nothing before DTLS has keyed it.
        if webrtc != nil && srtp == nil { return }
        let header = RTPHeader(
            marker: marker, payloadType: payloadType & 0x7F, sequenceNumber: sequence, timestamp: ts, ssrc: ssrc)
        guard (try? header.write(into: txBuffer)) == 12 else { return }
        sequence &+= 1
        var length = 12 + payloadLength
        if tap != nil {
            tapPacket(
                UnsafeRawBufferPointer(rebasing: txBuffer[0..<length]), sent: true, rtcp: false, local: socket.local,
                remote: remote)
        }
        if let srtp {
            // Protected last, in place: the tag goes after the payload (txBuffer has room).
            guard case .ok(let n) = srtp.protectRTP(txBuffer, length: length) else { return }
            length = n
        }
        if transmit(UnsafeRawBufferPointer(rebasing: txBuffer[0..<length]), on: socket, to: remote) {
            statistics.packetsSent += 1
            tx.recordSent(payloadLength: payloadLength, timestamp: ts, now: now)
        }
    }

    /// Sends one encoded 20 ms audio frame (payload already at `txBuffer[12...]`).
    @inline(__always)
    func sendAudio(payloadLength: Int, now: Double) {
        send(
            payloadLength: payloadLength, payloadType: configuration.payloadType, marker: !sentFirst,
            timestamp: timestamp, now: now)
        sentFirst = true
        sentAudioSinceTick = true
        timestamp &+= timestampStep
    }

    /// Sends one encoded frame (payload at `txBuffer[12...]`) with timestamp `ts`; the next
    /// frame follows on from it.
    @inline(__always)
    func sendAudio(payloadLength: Int, at ts: UInt32, now: Double) {
        timestamp = ts
        sendAudio(payloadLength: payloadLength, now: now)
    }

    /// Relays a packet from the other leg without decoding (same codec both sides): our
    /// SSRC and sequence, the source's timestamps shifted by a fixed offset.
    @inline(__always)
    func relay(payload: UnsafeRawBufferPointer, sourceSSRC: UInt32, sourceTimestamp: UInt32, marker: Bool, now: Double)
    {
        if relayOffset == nil || relaySSRC != sourceSSRC {
            // A new source stream: keep our timestamps moving forward from where they were.
            relayOffset = timestamp &- sourceTimestamp
            relaySSRC = sourceSSRC
        }
        let ts = sourceTimestamp &+ relayOffset!
        UnsafeMutableRawBufferPointer(rebasing: txBuffer[12..<(12 + payload.count)]).copyMemory(from: payload)
        send(
            payloadLength: payload.count, payloadType: configuration.payloadType, marker: marker || !sentFirst,
            timestamp: ts, now: now)
        sentFirst = true
        sentAudioSinceTick = true
        timestamp = ts &+ timestampStep
    }

    /// Sends the next RFC 4733 packet of a queued digit, if one is due this tick.
    func tickDTMF(now: Double) {
        let sentAudio = sentAudioSinceTick
        sentAudioSinceTick = false
        guard let pt = configuration.telephoneEventPayloadType, !dtmfOut.isIdle else { return }
        if let packet = dtmfOut.tick(timestamp: timestamp) {
            let n = packet.report.serialize(into: UnsafeMutableRawBufferPointer(rebasing: txBuffer[12..<16]))
            send(payloadLength: n, payloadType: pt, marker: packet.marker, timestamp: packet.timestamp, now: now)
        }
        // Durations follow our timestamp: with no audio going out (the other side has not
        // spoken yet) it must still move on, or the digit would never end.
        if !sentAudio { timestamp &+= timestampStep }
    }

    var address: SocketAddress { socket.local }
}
