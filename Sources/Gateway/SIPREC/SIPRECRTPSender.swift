import IOCore
import Media
import Synchronization

/// The recording session's RTP: one socket per track (ports from the OS), and each 20 ms
/// frame sent as PCMU from the media thread with a non-blocking `sendto`. The lock is held
/// only to encode and send one frame (media thread) or to set where packets go (SIP loop);
/// nothing in it waits.
final class SIPRECRTPSender: Sendable {
    /// One socket per track, in `SIPRECMetadataState.tracks` order.
    let sockets: [UDPSocket]
    private let state: Mutex<State>

    private struct State {
        /// Where each stream goes; nil: not sent.
        var destinations: [RawSocketAddress?]
        var headers: [RTPHeader]
        var sent: [Int]
        var packet = [UInt8](repeating: 0, count: 12 + 160)
        var narrow = [Int16](repeating: 0, count: 160)
    }

    /// Opens one socket per track on `host`, port 0.
    init(bindHost: String) throws {
        let tracks = SIPRECMetadataState.tracks
        sockets = try tracks.map { _ in
            try UDPSocket(bind: SocketAddress(host: bindHost, port: 0), bufferBytes: 1 << 16)
        }
        let headers = tracks.map { _ in
            RTPHeader(
                marker: true, payloadType: 0, sequenceNumber: UInt16.random(in: 0...UInt16.max),
                timestamp: UInt32.random(in: 0...UInt32.max), ssrc: UInt32.random(in: 1...UInt32.max))
        }
        state = Mutex(
            State(
                destinations: tracks.map { _ in nil }, headers: headers, sent: tracks.map { _ in 0 }))
    }

    /// The local port of each stream.
    var ports: [Int] { sockets.map(\.local.port) }

    /// Packets sent so far on each stream.
    var packetsSent: [Int] { state.withLock { $0.sent } }

    /// Sends each stream to its address from the next frame on (nil: that stream stops).
    func send(to destinations: [SocketAddress?]) {
        let raw = destinations.map { $0.flatMap(RawSocketAddress.init) }
        state.withLock { $0.destinations = raw }
    }

    /// Stops sending both streams.
    func stop() { send(to: sockets.map { _ in nil }) }

    /// One frame of each track (8 or 16 kHz; 16 kHz halved to PCMU's 8 kHz by a two-tap
    /// average). Timestamps advance whether or not a stream is sent, so a stream that starts
    /// late or pauses keeps the call's timeline. No allocation.
    func send(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int) {
        state.withLock { s in
            for index in 0..<2 {
                let frame = index == 0 ? inbound : outbound
                guard let destination = s.destinations[index] else {
                    s.headers[index].timestamp &+= 160
                    continue
                }
                let count = Self.narrow(frame, wide: sampleRate == 16_000, into: &s.narrow)
                let header = s.headers[index]
                let length = s.packet.withUnsafeMutableBytes { packet -> Int in
                    guard let headerLength = try? header.write(into: packet) else { return 0 }
                    let payload = UnsafeMutableBufferPointer(
                        rebasing: packet.bindMemory(to: UInt8.self)[headerLength..<(headerLength + count)])
                    s.narrow.withUnsafeBufferPointer {
                        G711.encodeULaw(UnsafeBufferPointer(rebasing: $0[0..<count]), into: payload)
                    }
                    return headerLength + count
                }
                let sent = s.packet.withUnsafeBytes {
                    length > 0 && sockets[index].send(UnsafeRawBufferPointer(rebasing: $0[0..<length]), to: destination)
                }
                if sent { s.sent[index] += 1 }
                s.headers[index].marker = false
                s.headers[index].sequenceNumber &+= 1
                s.headers[index].timestamp &+= 160
            }
        }
    }

    /// Up to 160 samples at 8 kHz into `out`; returns how many.
    private static func narrow(_ frame: UnsafeBufferPointer<Int16>, wide: Bool, into out: inout [Int16]) -> Int {
        let count = min(out.count, wide ? frame.count / 2 : frame.count)
        for i in 0..<count {
            out[i] = wide ? Int16((Int32(frame[2 * i]) + Int32(frame[2 * i + 1])) / 2) : frame[i]
        }
        return count
    }
}
