import Media

/// Hands a call's two tracks to its recording writer (which queues them for its own thread):
/// the carrier's side left, the app's right, converted to the file's rate when the call runs
/// at another.
final class RecordingTap: MediaAudioSink {
    let writer: CallRecordingWriter

    init(writer: CallRecordingWriter) { self.writer = writer }

    func mediaAudio(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int) {
        let rate = writer.configuration.sampleRate
        guard rate != sampleRate else { return writer.append(trunk: inbound, app: outbound) }
        writer.append(
            trunk: PCMRateConversion.convert(inbound, from: sampleRate, to: rate),
            app: PCMRateConversion.convert(outbound, from: sampleRate, to: rate))
    }
}
