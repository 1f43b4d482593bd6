/// A call's decoded audio on its way to its sinks, on the call's media thread: frames of
/// each track are queued as the pipeline makes them (on arrival or on the tick) and handed
/// out in pairs on the 20 ms tick, so every sink sees both tracks in step. A track that sent
/// nothing in a tick is silence; one that sent several (a burst after a stall) waits in a
/// short queue, its oldest frame dropped past `depth`. Storage is allocated once per sample
/// rate; the per-frame path does not allocate. Carried from a call's pipeline to the one
/// that replaces it (a codec change, a merge), so sinks and source survive rebuilds.
final class CallAudioTap {  // confined to the call's media thread
    private(set) var sinks: [any MediaAudioSink] = []
    /// Plays to the trunk instead of the platform leg's RTP when set.
    var source: (any MediaAudioSource)?
    private(set) var sampleRate = 0
    private var frameSamples = 0
    /// Frames each track may hold between ticks.
    static let depth = 6
    private var rings: [[Int16]] = [[], []]
    private var heads = [0, 0]
    private var counts = [0, 0]
    private var pair: [[Int16]] = [[], []]
    private var sourceFrame: [Int16] = []
    /// Frames dropped because a track ran more than `depth` ahead of the tick.
    private(set) var dropped = 0
    /// Ticks handed out since the call's audio started.
    private(set) var ticks = 0
    private var started = false

    var isEmpty: Bool { sinks.isEmpty && source == nil }

    func add(_ sink: any MediaAudioSink) {
        guard !sinks.contains(where: { $0 === sink }) else { return }
        sinks.append(sink)
    }

    func remove(_ sink: any MediaAudioSink) { sinks.removeAll { $0 === sink } }

    private func prepare(frameSamples n: Int) {
        guard n != frameSamples else { return }
        frameSamples = n
        sampleRate = n * 50
        rings = [[Int16](repeating: 0, count: n * Self.depth), [Int16](repeating: 0, count: n * Self.depth)]
        pair = [[Int16](repeating: 0, count: n), [Int16](repeating: 0, count: n)]
        heads = [0, 0]
        counts = [0, 0]
    }

    /// A scratch frame of `n` samples for the source to fill.
    func withSourceFrame(_ n: Int, _ body: (UnsafeMutableBufferPointer<Int16>) -> Void) {
        if sourceFrame.count != n { sourceFrame = [Int16](repeating: 0, count: n) }
        sourceFrame.withUnsafeMutableBufferPointer { body($0) }
    }

    /// A frame the pipeline produced for `track`.
    func captured(_ frame: UnsafeBufferPointer<Int16>, track: MediaAudioTrack) {
        guard !sinks.isEmpty else { return }
        prepare(frameSamples: frame.count)
        started = true
        let t = track == .inbound ? 0 : 1
        if counts[t] == Self.depth {
            heads[t] = (heads[t] + 1) % Self.depth
            counts[t] -= 1
            dropped += 1
        }
        let slot = (heads[t] + counts[t]) % Self.depth
        let n = frameSamples
        rings[t].withUnsafeMutableBufferPointer { ring in
            _ = UnsafeMutableBufferPointer(rebasing: ring[(slot * n)..<((slot + 1) * n)]).initialize(
                fromContentsOf: frame)
        }
        counts[t] += 1
    }

    /// The tick: one frame of each track (or silence) to every sink, once audio has started.
    func tick() {
        guard started, !sinks.isEmpty, frameSamples > 0 else { return }
        let n = frameSamples
        for t in 0..<2 {
            if counts[t] > 0 {
                let slot = heads[t]
                rings[t].withUnsafeBufferPointer { ring in
                    pair[t].withUnsafeMutableBufferPointer { out in
                        _ = out.initialize(
                            fromContentsOf: UnsafeBufferPointer(rebasing: ring[(slot * n)..<((slot + 1) * n)]))
                    }
                }
                heads[t] = (heads[t] + 1) % Self.depth
                counts[t] -= 1
            } else {
                pair[t].withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            }
        }
        ticks += 1
        let rate = sampleRate
        pair[0].withUnsafeBufferPointer { inbound in
            pair[1].withUnsafeBufferPointer { outbound in
                for sink in sinks { sink.mediaAudio(inbound: inbound, outbound: outbound, sampleRate: rate) }
            }
        }
    }
}
