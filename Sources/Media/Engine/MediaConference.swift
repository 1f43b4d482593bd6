import IOCore

/// A three-way call: two calls' trunk legs and the host call's platform leg, mixed so each
/// hears the other two and not itself (mix-minus). The held call's platform leg is left
/// out: the app has one audio stream, the host's. Both calls live on the host's media
/// thread; the host's tick runs the conference, the other call only its control work.
/// Without the host's platform (`includesPlatform` false) it is a bridge of the two trunk
/// legs: a transfer the gateway completed itself, which the app has left.
///
/// Built once per merge; the per-tick path uses the mixer's preallocated buffers.
final class MediaConference {  // confined to the host's media thread with its pipelines
    unowned(unsafe) let host: CallPipeline
    unowned(unsafe) let member: CallPipeline
    private let mixer: Mixer
    private let parties: [(leg: RTPLeg, party: Mixer.Party)]
    /// Which parties (and, last, the platform legs left out) gave a frame this tick.
    private var pulled: [Bool]
    /// Platform legs outside the mix, drained each tick so their buffers do not fill up.
    private let drained: [(pipeline: CallPipeline, leg: RTPLeg)]

    init(host: CallPipeline, member: CallPipeline, includesPlatform: Bool = true) throws(MediaMergeError) {
        guard host.frameSamples == member.frameSamples else {
            throw .sampleRateMismatch(host: host.frameSamples * 50, member: member.frameSamples * 50)
        }
        guard host.trunk.codec != nil, host.platform.codec != nil, member.trunk.codec != nil else {
            throw .notTranscoding
        }
        self.host = host
        self.member = member
        let mixed = includesPlatform ? [host.trunk, member.trunk, host.platform] : [host.trunk, member.trunk]
        mixer = Mixer(configuration: .init(maximumParties: mixed.count, sampleRate: host.frameSamples * 50))
        drained = [(member, member.platform)] + (includesPlatform ? [] : [(host, host.platform)])
        pulled = [Bool](repeating: false, count: mixed.count + drained.count)
        var parties: [(RTPLeg, Mixer.Party)] = []
        for leg in mixed {
            guard let party = try? mixer.join() else { throw .notTranscoding }
            parties.append((leg, party))
        }
        self.parties = parties
    }

    /// One 20 ms step: pull a frame from each party, mix, push each its mix.
    func tick(now: Double) {
        let start = EventLoop.now()
        for (i, (leg, party)) in parties.enumerated() {
            let frame = owner(of: leg).pullFrame(leg, now: now)
            pulled[i] = frame != nil
            if let frame { try? mixer.submit(UnsafeBufferPointer(frame), from: party) }
        }
        for (i, (pipeline, leg)) in drained.enumerated() {
            pulled[parties.count + i] = pipeline.pullFrame(leg, now: now) != nil
        }
        // Before anyone has sent anything there is nothing to mix: send nothing, as a plain
        // call does before its first packet.
        guard pulled.contains(true) else { return }
        mixer.mix()
        for (leg, party) in parties {
            let pipeline = owner(of: leg)
            _ = mixer.withOutput(for: party) { pipeline.pushFrame($0, to: leg, now: now) }
        }
        for (i, (leg, _)) in parties.enumerated() where pulled[i] { leg.consumeDecoded(host.frameSamples) }
        for (i, (pipeline, leg)) in drained.enumerated() where pulled[parties.count + i] {
            leg.consumeDecoded(pipeline.frameSamples)
        }
        host.thread.record(microseconds: (EventLoop.now() - start) * 1e6)
    }

    private func owner(of leg: RTPLeg) -> CallPipeline {
        leg === host.trunk || leg === host.platform ? host : member
    }

    /// Ends the three-way call: both calls go back to their own pipelines.
    func dissolve() {
        host.conference = nil
        member.conference = nil
    }
}

/// Why two calls could not be bridged.
public enum MediaMergeError: Error, Sendable, Equatable, CustomStringConvertible {
    case sampleRateMismatch(host: Int, member: Int)
    case notTranscoding
    case sameCall
    case closed

    public var description: String {
        switch self {
        case .sampleRateMismatch(let h, let m): "the calls run at different rates (\(h) and \(m) Hz)"
        case .notTranscoding: "a call has no decoder for mixing"
        case .sameCall: "a call cannot be merged with itself"
        case .closed: "a call is closed"
        }
    }
}
