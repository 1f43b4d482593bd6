import Media
import Synchronization

/// Answering-machine detection on a call's inbound track (what the callee says), fed on the
/// call's media thread from the answer; its verdict (and beep) go to `report`, which hops to
/// the SIP loop. Detection is cheap per frame (an energy figure, a Goertzel bank, spandsp's
/// tone detectors), so it runs in place instead of behind a queue.
final class AMDTap: MediaAudioSink {
    private let settings: AMDSettings
    /// The detector holds spandsp's tone detectors (C state, not Sendable); it is reached only
    /// under the lock, so the call moving to another media thread (a merge) hands it over safely.
    private struct Guarded: @unchecked Sendable { var detector: AnsweringMachineDetector? }
    private let guarded = Mutex(Guarded())
    private let done = Atomic<Bool>(false)
    private let report: @Sendable (AMDEvent) -> Void

    init(settings: AMDSettings, report: @escaping @Sendable (AMDEvent) -> Void) {
        self.settings = settings
        self.report = report
    }

    func mediaAudio(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int) {
        guard !done.load(ordering: .relaxed) else { return }
        let settings = self.settings
        let (event, finished) = guarded.withLock { g -> (AMDEvent?, Bool) in
            if g.detector == nil {
                g.detector = try? AnsweringMachineDetector(sampleRate: sampleRate, settings: settings)
            }
            guard g.detector != nil else { return (nil, true) }
            let event = g.detector!.process(inbound)
            return (event, g.detector!.isFinished)
        }
        if finished { done.store(true, ordering: .relaxed) }
        if let event { report(event) }
    }
}
