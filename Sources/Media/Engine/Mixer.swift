/// The mixer refused a request.
public enum MixerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// All party slots are taken.
    case full(capacity: Int)
    /// The party has left (or belongs to another mixer).
    case unknownParty
    /// A frame longer than one tick's samples.
    case frameTooLong(count: Int, frameSamples: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .full(let capacity): "mixer is full (\(capacity) parties)"
        case .unknownParty: "party is not in this mixer"
        case .frameTooLong(let count, let frameSamples): "frame of \(count) samples; a tick is \(frameSamples)"
        }
    }
}

/// N-party mix-minus for merged calls: every tick each party may submit one frame, and
/// each party then hears the sum of all the OTHER parties' frames (never its own voice
/// back), accumulated in 32 bits and clamped to 16.
///
/// Use per tick: `submit` for the parties that have audio (a party that submits nothing
/// is silent this tick), `mix()`, then read each party's `output`. All buffers are
/// allocated in `init`; joining, leaving, submitting and mixing never allocate.
/// Not thread-safe: the call's media thread owns it.
public final class Mixer {
    /// Mixer settings.
    public struct Configuration: Sendable, Equatable {
        /// The most parties at once. Default 8.
        public var maximumParties: Int
        /// The PCM sample rate in Hz: 8000 (G.711) or 16000 (G.722). Default 8000.
        public var sampleRate: Int
        /// The tick length in ms. Default 20.
        public var frameMs: Int

        /// Settings with the documented defaults.
        public init(maximumParties: Int = 8, sampleRate: Int = 8_000, frameMs: Int = 20) {
            self.maximumParties = max(maximumParties, 1)
            self.sampleRate = max(sampleRate, 1_000)
            self.frameMs = max(frameMs, 1)
        }

        /// Samples per frame: 160 at 8 kHz, 320 at 16 kHz for 20 ms.
        public var frameSamples: Int { sampleRate * frameMs / 1000 }
    }

    /// A party's handle. A handle stays invalid after its party leaves, even if the slot
    /// is reused by a later party.
    public struct Party: Sendable, Hashable {
        /// The party's slot, 0..<maximumParties.
        public let slot: Int
        fileprivate let generation: UInt32
    }

    /// The settings in use.
    public let configuration: Configuration
    /// Samples per frame.
    public let frameSamples: Int

    private let capacity: Int
    private let inputs: UnsafeMutablePointer<Int16>
    private let outputs: UnsafeMutablePointer<Int16>
    private let sum: UnsafeMutablePointer<Int32>
    private let occupied: UnsafeMutablePointer<Bool>
    private let submitted: UnsafeMutablePointer<Bool>
    private let generations: UnsafeMutablePointer<UInt32>
    /// The number of parties in the mix.
    public private(set) var partyCount = 0

    /// An empty mixer with all its buffers allocated.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        capacity = configuration.maximumParties
        frameSamples = max(configuration.frameSamples, 1)
        inputs = .allocate(capacity: capacity * frameSamples)
        inputs.initialize(repeating: 0, count: capacity * frameSamples)
        outputs = .allocate(capacity: capacity * frameSamples)
        outputs.initialize(repeating: 0, count: capacity * frameSamples)
        sum = .allocate(capacity: frameSamples)
        sum.initialize(repeating: 0, count: frameSamples)
        occupied = .allocate(capacity: capacity)
        occupied.initialize(repeating: false, count: capacity)
        submitted = .allocate(capacity: capacity)
        submitted.initialize(repeating: false, count: capacity)
        generations = .allocate(capacity: capacity)
        generations.initialize(repeating: 0, count: capacity)
    }

    deinit {
        inputs.deallocate()
        outputs.deallocate()
        sum.deallocate()
        occupied.deallocate()
        submitted.deallocate()
        generations.deallocate()
    }

    /// Adds a party; it hears the others from the next `mix()`. Throws `.full` when all
    /// `maximumParties` slots are taken.
    public func join() throws(MixerError) -> Party {
        guard let slot = (0..<capacity).first(where: { !occupied[$0] }) else { throw .full(capacity: capacity) }
        occupied[slot] = true
        submitted[slot] = false
        clear(outputs, slot: slot)
        partyCount += 1
        return Party(slot: slot, generation: generations[slot])
    }

    /// Removes a party; returns false if it had already left. Its frame for this tick,
    /// if submitted, is dropped.
    @discardableResult
    public func leave(_ party: Party) -> Bool {
        guard contains(party) else { return false }
        occupied[party.slot] = false
        submitted[party.slot] = false
        generations[party.slot] &+= 1
        clear(outputs, slot: party.slot)
        partyCount -= 1
        return true
    }

    /// Whether `party` is in the mix.
    public func contains(_ party: Party) -> Bool {
        party.slot >= 0 && party.slot < capacity && occupied[party.slot] && generations[party.slot] == party.generation
    }

    /// Gives `party`'s frame for this tick. A shorter frame is padded with silence;
    /// submitting twice in one tick keeps the second.
    public func submit(_ frame: UnsafeBufferPointer<Int16>, from party: Party) throws(MixerError) {
        guard contains(party) else { throw .unknownParty }
        guard frame.count <= frameSamples else { throw .frameTooLong(count: frame.count, frameSamples: frameSamples) }
        let destination = inputs + party.slot * frameSamples
        if let source = frame.baseAddress { destination.update(from: source, count: frame.count) }
        (destination + frame.count).update(repeating: 0, count: frameSamples - frame.count)
        submitted[party.slot] = true
    }

    /// Gives `party`'s frame for this tick (see the buffer form).
    public func submit(_ frame: [Int16], from party: Party) throws(MixerError) {
        try frame.withUnsafeBufferPointer { buffer throws(MixerError) in try submit(buffer, from: party) }
    }

    /// Mixes this tick: each party's output becomes the others' frames summed and clamped.
    /// Then forgets the submissions, so a party that sends nothing next tick is silent.
    public func mix() {
        sum.update(repeating: 0, count: frameSamples)
        for slot in 0..<capacity where occupied[slot] && submitted[slot] {
            let input = inputs + slot * frameSamples
            for index in 0..<frameSamples { sum[index] += Int32(input[index]) }
        }
        for slot in 0..<capacity where occupied[slot] {
            let output = outputs + slot * frameSamples
            if submitted[slot] {
                // Mix-minus: remove the party's own exact samples from the full sum.
                let input = inputs + slot * frameSamples
                for index in 0..<frameSamples {
                    output[index] = Int16(clamping: sum[index] - Int32(input[index]))
                }
            } else {
                for index in 0..<frameSamples { output[index] = Int16(clamping: sum[index]) }
            }
        }
        submitted.update(repeating: false, count: capacity)
    }

    /// Calls `body` with `party`'s output from the last `mix()` (silence before the first).
    /// The buffer is valid only inside `body`.
    public func withOutput<R, E: Error>(
        for party: Party, _ body: (UnsafeBufferPointer<Int16>) throws(E) -> R
    ) throws(E) -> R? {
        guard contains(party) else { return nil }
        return try body(UnsafeBufferPointer(start: outputs + party.slot * frameSamples, count: frameSamples))
    }

    /// Copies `party`'s output from the last `mix()` into `pcm` (contents replaced, storage
    /// reused). Throws `.unknownParty` for a party not in the mix.
    public func copyOutput(for party: Party, into pcm: inout [Int16]) throws(MixerError) {
        guard contains(party) else { throw .unknownParty }
        let source = UnsafeBufferPointer(start: outputs + party.slot * frameSamples, count: frameSamples)
        pcm.removeAll(keepingCapacity: true)
        pcm.append(contentsOf: source)
    }

    private func clear(_ buffer: UnsafeMutablePointer<Int16>, slot: Int) {
        (buffer + slot * frameSamples).update(repeating: 0, count: frameSamples)
    }
}
