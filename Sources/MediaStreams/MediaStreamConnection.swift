import Crypto
import Media
import Synchronization
import WebClient

/// One Twilio Media Stream to one agent, over WebClient's WebSocket client, never blocking
/// its callers: `start` connects in the background and queues `connected` and `start`;
/// `sendAudio` encodes 20 ms and queues a `media` message; the connection pulls the queue on
/// the client loop while the socket has room (`WebSocketClient.feed`), so a slow agent fills
/// the bounded queue, whose oldest audio is then dropped and counted. What the agent sends
/// comes to `handler` as `MediaStreamEvent`s (on the client loop): audio decoded and cut
/// into 20 ms frames, marks, clears, refused messages, and the end once.
///
/// Sequence numbers are given when a message is queued, so a dropped frame leaves a gap the
/// agent can see; `chunk` counts each track's frames from 1 and `timestamp` is 20 ms per
/// chunk. Threading: any thread may call anything; the lock is held for queue updates only.
public final class MediaStreamConnection: Sendable {
    public let configuration: MediaStreamConfiguration
    private let handler: @Sendable (MediaStreamEvent) -> Void
    private let state = Mutex(State())

    private enum Phase { case idle, connecting, open, stopping, ended }

    private struct Pending {
        var message: MediaStreamMessage
        var isAudio: Bool
    }

    private struct State {
        var phase = Phase.idle
        var client: WebSocketClient?
        var queue: [Pending] = []
        var head = 0
        var queuedAudio = 0
        var sequence = 0
        var chunks: [MediaStreamTrack: Int] = [:]
        var streamSid = ""
        var accountSid = ""
        var callSid = ""
        /// The agent's audio not yet a whole frame.
        var remainder: [Int16] = []
        var statistics = MediaStreamStatistics()

        mutating func nextSequence() -> String {
            sequence += 1
            return String(sequence)
        }

        mutating func enqueue(_ message: MediaStreamMessage, isAudio: Bool = false) {
            queue.append(Pending(message: message, isAudio: isAudio))
            if isAudio { queuedAudio += 1 }
        }

        mutating func pop() -> Pending? {
            guard head < queue.count else { return nil }
            let first = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            if first.isAudio { queuedAudio -= 1 }
            return first
        }

        /// Removes the oldest audio message.
        mutating func dropOldestAudio() {
            guard let index = queue[head...].firstIndex(where: \.isAudio) else { return }
            queue.remove(at: index)
            queuedAudio -= 1
            statistics.droppedAudioFrames += 1
        }
    }

    /// A stream to `configuration.url`; nothing happens until `start`.
    public init(_ configuration: MediaStreamConfiguration, handler: @escaping @Sendable (MediaStreamEvent) -> Void) {
        self.configuration = configuration
        self.handler = handler
    }

    /// Connects (in the background) and queues `connected` and `start` with these ids and
    /// the configured audio format. Once only; later calls are ignored.
    public func start(
        streamSid: String, accountSid: String, callSid: String, tracks: [MediaStreamTrack] = [.inbound],
        customParameters: [String: String] = [:]
    ) {
        let started = state.withLock { s -> Bool in
            guard s.phase == .idle else { return false }
            s.phase = .connecting
            s.streamSid = streamSid
            s.accountSid = accountSid
            s.callSid = callSid
            s.enqueue(.connected(MediaStreamMessage.Connected()))
            let metadata = MediaStreamMessage.Metadata(
                streamSid: streamSid, accountSid: accountSid, callSid: callSid, tracks: tracks.map(\.rawValue),
                customParameters: customParameters, mediaFormat: configuration.audioFormat.mediaFormat)
            s.enqueue(.start(.init(sequenceNumber: s.nextSequence(), streamSid: streamSid, start: metadata)))
            return true
        }
        guard started else { return }
        let c = configuration
        WebSocketClient.connect(
            url: c.url, headers: c.headers, timeout: c.connectTimeout,
            maxMessageBytes: max(c.maxMessageBytes, 16 << 20),
            caFile: c.caFile, dns: c.dns, handler: { [weak self] in self?.received($0) },
            completion: { [weak self] in self?.opened($0) })
    }

    /// Queues 20 ms of `track` (Int16 PCM at the format's rate: 160 samples for mu-law, 320
    /// for L16): encoded, base64, with the next sequence number. Never blocks; ignored before
    /// `start` and after the end. When `maxQueuedAudioFrames` are waiting the oldest goes.
    public func sendAudio(_ frame: [Int16], track: MediaStreamTrack = .inbound) {
        let payload = Base64.encode(configuration.audioFormat.encode(frame))
        let client = state.withLock { s -> WebSocketClient? in
            guard s.phase == .connecting || s.phase == .open else { return nil }
            let chunk = (s.chunks[track] ?? 0) + 1
            s.chunks[track] = chunk
            let media = MediaStreamMessage.Media.Payload(
                track: track.rawValue, chunk: String(chunk), timestamp: String((chunk - 1) * 20), payload: payload)
            s.enqueue(
                .media(.init(sequenceNumber: s.nextSequence(), streamSid: s.streamSid, media: media)), isAudio: true)
            while s.queuedAudio > max(1, configuration.maxQueuedAudioFrames) { s.dropOldestAudio() }
            return s.client
        }
        client?.pullFeed()
    }

    /// Echoes an agent's mark (its audio has been played).
    public func sendMark(_ name: String) {
        enqueueControl { s in
            .mark(.init(sequenceNumber: s.nextSequence(), streamSid: s.streamSid, mark: .init(name: name)))
        }
    }

    /// Tells the agent the caller pressed `digit` (0-9, *, #, A-D; anything else is ignored).
    public func sendDTMF(_ digit: String) {
        guard digit.count == 1, "0123456789*#ABCD".contains(digit) else { return }
        enqueueControl { s in
            .dtmf(.init(sequenceNumber: s.nextSequence(), streamSid: s.streamSid, dtmf: .init(digit: digit)))
        }
    }

    private func enqueueControl(_ make: (inout State) -> MediaStreamMessage) {
        let client = state.withLock { s -> WebSocketClient? in
            guard s.phase == .connecting || s.phase == .open else { return nil }
            s.enqueue(make(&s))
            return s.client
        }
        client?.pullFeed()
    }

    /// Ends the stream: what is still queued is dropped, `stop` is sent and the WebSocket
    /// closed (at most a second later if the agent does not answer); `.ended(.stopped)`
    /// follows. Never blocks; idempotent.
    public func stop() {
        let (client, stop, endNow) = state.withLock { s -> (WebSocketClient?, MediaStreamMessage?, Bool) in
            switch s.phase {
            case .idle:
                s.phase = .ended
                return (nil, nil, true)
            case .connecting, .open:
                s.queue = []
                s.head = 0
                s.queuedAudio = 0
                let message = MediaStreamMessage.stop(
                    .init(
                        sequenceNumber: s.nextSequence(), streamSid: s.streamSid,
                        stop: .init(accountSid: s.accountSid, callSid: s.callSid)))
                s.enqueue(message)
                let open = s.phase == .open
                s.phase = .stopping
                return open ? (s.client, s.pop()?.message, false) : (nil, nil, false)
            case .stopping, .ended:
                return (nil, nil, false)
            }
        }
        if endNow { handler(.ended(.stopped)) }
        guard let client, let stop else { return }
        try? client.send(text: stop.json)
        client.closeWithoutWaiting()
    }

    /// The counters now.
    public var statistics: MediaStreamStatistics {
        state.withLock { s in
            var statistics = s.statistics
            statistics.queuedMessages = s.queue.count - s.head
            return statistics
        }
    }

    // MARK: On the client loop

    private func opened(_ result: Result<WebSocketClient, IrisTransportError>) {
        switch result {
        case .failure(let error):
            end(.failed(error))
        case .success(let client):
            let stopping = state.withLock { s -> Bool in
                s.client = client
                if s.phase == .connecting { s.phase = .open }
                return s.phase == .stopping
            }
            if stopping {
                // stop() came first: only its message is queued.
                if let stop = state.withLock({ $0.pop() }) { try? client.send(text: stop.message.json) }
                client.closeWithoutWaiting()
                return
            }
            handler(.opened)
            client.feed(lowWater: configuration.lowWaterBytes) { [weak self] in self?.nextToSend() }
        }
    }

    private func nextToSend() -> String? {
        let next = state.withLock { s -> MediaStreamMessage? in
            guard s.phase == .open, let pending = s.pop() else { return nil }
            if pending.isAudio { s.statistics.sentAudioFrames += 1 }
            return pending.message
        }
        return next?.json
    }

    private func received(_ event: WebSocketEvent) {
        switch event {
        case .message(.text(let text)):
            let events: [MediaStreamEvent]
            do throws(MediaStreamMessageError) {
                events = try take(AgentMessage.decode(text, limit: configuration.maxMessageBytes))
            } catch {
                state.withLock { $0.statistics.refusedMessages += 1 }
                events = [.refused(error)]
            }
            for e in events { handler(e) }
        case .message(.binary(let bytes)):
            state.withLock { $0.statistics.refusedMessages += 1 }
            handler(.refused(.notJSON("a binary message of \(bytes.count) bytes (messages are JSON text)")))
        case .closed(let frame):
            end(.closedByAgent(code: frame?.code, reason: frame?.reason ?? ""))
        case .failed(let error):
            end(.failed(error))
        }
    }

    /// The agent's audio is Twilio's: mu-law at 8 kHz, whatever format the stream sends in.
    public static let agentSampleRate = 8_000

    /// What one agent message means: whole 20 ms frames, then its mark or clear.
    private func take(_ message: AgentMessage) throws(MediaStreamMessageError) -> [MediaStreamEvent] {
        let frame = Self.agentSampleRate / 50
        return try state.withLock { s throws(MediaStreamMessageError) -> [MediaStreamEvent] in
            let sid: String
            switch message {
            case .media(let m): sid = m.streamSid
            case .mark(let m): sid = m.streamSid
            case .clear(let m): sid = m.streamSid
            }
            guard sid == s.streamSid else {
                throw .invalidValue(field: "streamSid", reason: "\"\(sid)\" is not this stream's")
            }
            var events: [MediaStreamEvent] = []
            switch message {
            case .media:
                var pcm: [Int16] = []
                G711.decodeULaw(message.audio ?? [], into: &pcm)
                s.remainder += pcm
                var start = 0
                while s.remainder.count - start >= frame {
                    events.append(.audio(Array(s.remainder[start..<(start + frame)])))
                    start += frame
                }
                s.remainder.removeFirst(start)
            case .mark(let m):
                // The audio before a mark is played before it: the last part frame, padded.
                if !s.remainder.isEmpty {
                    events.append(.audio(s.remainder + repeatElement(0, count: frame - s.remainder.count)))
                    s.remainder = []
                }
                events.append(.mark(m.mark.name))
            case .clear:
                s.remainder = []
                events.append(.clear)
            }
            return events
        }
    }

    /// Reports the end once (a stop in progress makes any ending `.stopped`).
    private func end(_ why: MediaStreamEnd) {
        let reported = state.withLock { s -> MediaStreamEnd? in
            guard s.phase != .ended else { return nil }
            let stopping = s.phase == .stopping
            s.phase = .ended
            s.queue = []
            s.head = 0
            s.queuedAudio = 0
            s.client = nil
            return stopping ? .stopped : why
        }
        if let reported { handler(.ended(reported)) }
    }
}
