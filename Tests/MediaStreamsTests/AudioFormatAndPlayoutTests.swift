import Foundation
import Media
import MediaStreams
import Testing

/// The stream's audio formats, and the playout's queue, marks and clear as a plain value.
@Suite struct AudioFormatAndPlayoutTests {
    @Test func l16IsBigEndian() {
        #expect(MediaStreamAudioFormat.l16at16k.encode([0x0102, -2]) == [0x01, 0x02, 0xFF, 0xFE])
        #expect(MediaStreamAudioFormat.l16at16k.frameSamples == 320)
        #expect(MediaStreamAudioFormat.mulaw8k.frameSamples == 160)
    }

    static func frame(_ value: Int16, _ count: Int = 160) -> [Int16] { Array(repeating: value, count: count) }

    @Test func marksComeOutWithTheLastFrameBeforeThem() {
        var p = MediaStreamPlayout()
        #expect(p.mark("nothing-before") == ["nothing-before"])
        p.add(Self.frame(1) + Self.frame(2))
        #expect(p.mark("two") == [])
        p.add(Self.frame(3))
        #expect(p.mark("three") == [])
        #expect(p.next() == .init(audio: Self.frame(1), marks: []))
        #expect(p.next() == .init(audio: Self.frame(2), marks: ["two"]))
        #expect(p.pendingMarks == ["three"])
        #expect(p.next() == .init(audio: Self.frame(3), marks: ["three"]))
        #expect(p.next() == .init(audio: nil, marks: []))
    }

    @Test func partFrameBeforeAMarkIsPaddedWithSilence() {
        var p = MediaStreamPlayout()
        p.add(Self.frame(7, 100))
        #expect(p.next() == .init(audio: nil, marks: []))
        _ = p.mark("end")
        #expect(p.next() == .init(audio: Self.frame(7, 100) + Self.frame(0, 60), marks: ["end"]))
    }

    @Test func clearDropsTheQueueAndReturnsItsMarks() {
        var p = MediaStreamPlayout()
        p.add(Self.frame(1) + Self.frame(2) + Self.frame(3))
        _ = p.mark("a")
        #expect(p.next().audio == Self.frame(1))
        #expect(p.clear() == ["a"])
        #expect(p.queuedSamples == 0)
        #expect(p.next() == .init(audio: nil, marks: []))
        p.add(Self.frame(4))
        _ = p.mark("b")
        #expect(p.next() == .init(audio: Self.frame(4), marks: ["b"]))
    }

    @Test func audioPastTheBoundIsDroppedAndCounted() {
        var p = MediaStreamPlayout(frameSamples: 160, maxQueuedSamples: 320)
        p.add(Self.frame(1) + Self.frame(2) + Self.frame(3))
        #expect(p.queuedSamples == 320)
        #expect(p.droppedSamples == 160)
    }

    @Test func playerEchoesMarksAsFramesAreTaken() {
        let echoed = EchoLog()
        let player = MediaStreamPlayer { echoed.add($0) }
        player.handle(.audio(Self.frame(1)))
        player.handle(.mark("m"))
        #expect(echoed.names == [])
        #expect(player.nextFrame() == Self.frame(1))
        #expect(echoed.names == ["m"])
        player.handle(.audio(Self.frame(2)))
        player.handle(.mark("dropped"))
        player.handle(.clear)
        #expect(echoed.names == ["m", "dropped"])
        #expect(player.nextFrame() == nil)
    }
}

/// The bridge plays the agent's audio, which is mu-law at 8 kHz whatever format the stream
/// sends in: with a 16 kHz L16 stream, 20 ms from the agent is still one 20 ms frame to play.
@Suite struct MediaStreamBridgeTests {
    @Test(arguments: [MediaStreamAudioFormat.mulaw8k, .l16at16k], [8_000, 16_000])
    func theAgentsFramesPlayAtTheCallsRate(_ format: MediaStreamAudioFormat, _ callRate: Int) {
        var configuration = MediaStreamConfiguration(url: "ws://127.0.0.1:9/")
        configuration.audioFormat = format
        let bridge = MediaStreamBridge(connection: MediaStreamConnection(configuration) { _ in }, tracks: .inbound)
        let tone: [Int16] = (0..<160).map { i in
            let phase = 2 * Double.pi * 500 * Double(i) / 8000
            return Int16(8000 * sin(phase))
        }
        bridge.handle(.audio(tone))
        var frame = [Int16](repeating: 0, count: callRate / 50)
        let played = frame.withUnsafeMutableBufferPointer { bridge.mediaAudioFrame(into: $0, sampleRate: callRate) }
        #expect(played)
        #expect(Goertzel(frequency: 500, sampleRate: Double(callRate)).energyRatio(frame) > 0.8)
        let again = frame.withUnsafeMutableBufferPointer { bridge.mediaAudioFrame(into: $0, sampleRate: callRate) }
        #expect(!again, "one frame queued, one played")
    }
}
