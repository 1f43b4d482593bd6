import Testing

@testable import Media

@Suite struct InbandDTMFTests {
    enum Channel: String, CaseIterable, Sendable {
        case linear
        /// Through a G.711 µ-law encode and decode, as on a PCMU trunk.
        case ulaw

        func carry(_ pcm: [Int16]) -> [Int16] {
            guard self == .ulaw else { return pcm }
            var bytes: [UInt8] = []
            var decoded: [Int16] = []
            G711.encodeULaw(pcm, into: &bytes)
            G711.decodeULaw(bytes, into: &decoded)
            return decoded
        }
    }

    /// Generates `digits` with spandsp and feeds them, 20 ms at a time over `channel`,
    /// followed by `trailingMs` of silence, to a fresh `InbandDTMF`.
    private static func detect(
        _ digits: String, onMs: Int32 = 100, offMs: Int32 = 60, channel: Channel, trailingMs: Int = 200
    ) throws -> [DTMFEvent] {
        let generator = try DTMFGenerator(onMilliseconds: onMs, offMilliseconds: offMs)
        try generator.queue(digits)
        let detector = try InbandDTMF()
        var events: [DTMFEvent] = []
        var frame: [Int16] = []
        let frames = (Int(onMs + offMs) * digits.count + trailingMs) / 20
        for _ in 0..<frames {
            generator.generate(count: 160, into: &frame)
            events += detector.process(channel.carry(frame))
        }
        events += detector.finish()
        return events
    }

    /// The durations of the `.ended` events, and the events with durations removed.
    private static func split(_ events: [DTMFEvent]) -> (shape: [String], durations: [Int]) {
        var shape: [String] = []
        var durations: [Int] = []
        for event in events {
            switch event {
            case .began(let digit): shape.append("+\(digit)")
            case .ended(let digit, let ms):
                shape.append("-\(digit)")
                durations.append(ms)
            }
        }
        return (shape, durations)
    }

    @Test(arguments: DTMFDigit.allCases, Channel.allCases)
    func everyDigitIsDetectedOnceWithItsDuration(digit: DTMFDigit, channel: Channel) throws {
        let (shape, durations) = Self.split(try Self.detect(String(digit.character), channel: channel))
        #expect(shape == ["+\(digit)", "-\(digit)"])
        #expect(durations.allSatisfy { (80...120).contains($0) }, "100 ms tone measured as \(durations)")
    }

    @Test(arguments: Channel.allCases)
    func allDigitsInARowAreDetectedInOrder(channel: Channel) throws {
        let digits = "0123456789*#ABCD"
        let (shape, durations) = Self.split(try Self.detect(digits, onMs: 60, offMs: 50, channel: channel))
        #expect(shape == digits.flatMap { ["+\($0)", "-\($0)"] })
        #expect(durations.allSatisfy { (40...80).contains($0) }, "60 ms tones measured as \(durations)")
    }

    @Test(arguments: Channel.allCases)
    func aHeldKeyIsOneDigit(channel: Channel) throws {
        let (shape, durations) = Self.split(try Self.detect("8", onMs: 1500, offMs: 100, channel: channel))
        #expect(shape == ["+8", "-8"])
        #expect(durations.allSatisfy { (1480...1520).contains($0) })
    }

    @Test func theSameKeyTwiceWithAGapIsTwoDigits() throws {
        let (shape, _) = Self.split(try Self.detect("55", onMs: 80, offMs: 60, channel: .ulaw))
        #expect(shape == ["+5", "-5", "+5", "-5"])
    }

    @Test func noiseAndASingleToneAreNotDigits() throws {
        let detector = try InbandDTMF()
        var noise = ComfortNoiseGenerator(level: 20, seed: 42)
        var frame: [Int16] = []
        var events: [DTMFEvent] = []
        for _ in 0..<50 {
            noise.nextFrame(into: &frame)
            events += detector.process(frame)
        }
        // 1 kHz at about -10 dBm0, in 20 ms frames.
        for index in 0..<50 {
            events += detector.process(sine(1000, sampleRate: 8000, count: 160, offset: index * 160, amplitude: 3500))
        }
        events += detector.finish()
        #expect(events.isEmpty)
    }

    @Test func aLostFrameInsideAHeldKeyDoesNotSplitIt() throws {
        let generator = try DTMFGenerator(onMilliseconds: 400, offMilliseconds: 100)
        try generator.queue("3")
        let detector = try InbandDTMF()
        var frame: [Int16] = []
        var events: [DTMFEvent] = []
        for index in 0..<30 {
            generator.generate(count: 160, into: &frame)
            if index == 10 || index == 11 {
                events += detector.frameLost()
            } else {
                events += detector.process(frame)
            }
        }
        let (shape, durations) = Self.split(events)
        #expect(shape == ["+3", "-3"])
        #expect(durations.allSatisfy { (380...420).contains($0) })
    }
}
