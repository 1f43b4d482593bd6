import Foundation
import Glibc
import IOCore

/// RTCP for one leg (RFC 3550 §6): a compound SR (or RR before we have sent anything) with
/// a report block on the peer's stream and SDES CNAME, every `interval` seconds; incoming
/// SR and RR update the receive statistics and the round-trip time. RTCP goes to the peer's
/// RTP port + 1 (no rtcp-mux). With SRTP on the leg, reports go out as SRTCP and incoming
/// ones must authenticate (RFC 3711 §3.4). This runs every few seconds, not per packet, so building the
/// compound packet may allocate.
extension RTPLeg {
    /// Sends our report when it is due.
    func tickRTCP(now: Double, cname: String, interval: Double) {
        guard interval > 0, now - lastRTCP >= interval, let remote else { return }
        lastRTCP = now
        let wallclock = NTPTimestamp(secondsSince1970: Date().timeIntervalSince1970)
        let blocks = rx.makeReportBlock(now: now).map { [$0] } ?? []
        let report: RTCPPacket =
            tx.packetCount > 0
            ? .senderReport(
                RTCPSenderReport(
                    ssrc: ssrc, senderInfo: tx.makeSenderInfo(ntp: wallclock, now: now), reportBlocks: blocks))
            : .receiverReport(RTCPReceiverReport(ssrc: ssrc, reportBlocks: blocks))
        let compound = RTCPCompoundPacket(packets: [
            report, .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: cname))
        ])
        // rtcp-mux on a WebRTC leg (RFC 5761): the RTP socket, the RTP address, SRTCP only.
        let muxed = webrtc != nil
        if muxed && srtp == nil { return }
        // Plain RTCP goes where the peer's RTCP comes from once it has latched, else to its
        // RTP address's port + 1.
        let to: RawSocketAddress
        if muxed {
            to = remote
        } else if let latched = rtcpRemote {
            to = latched
        } else {
            guard let rtp = remote.address, rtp.port < 65535,
                let next = RawSocketAddress(SocketAddress(host: rtp.host, port: rtp.port + 1))
            else { return }
            to = next
        }
        guard let bytes = try? compound.serialize() else { return }
        let out = muxed ? socket : rtcpSocket
        if tap != nil { bytes.withUnsafeBytes { tapPacket($0, sent: true, rtcp: true, local: out.local, remote: to) } }
        guard let srtp else {
            bytes.withUnsafeBytes { _ = transmit($0, on: out, to: to) }
            return
        }
        // SRTCP: protected in txBuffer (free between sends on this thread), which has room
        // for the SRTCP index and tag.
        guard bytes.count <= 1500 else { return }
        bytes.withUnsafeBytes { txBuffer.copyMemory(from: $0) }
        guard case .ok(let n) = srtp.protectRTCP(txBuffer, length: bytes.count) else { return }
        transmit(UnsafeRawBufferPointer(rebasing: txBuffer[0..<n]), on: out, to: to)
    }

    /// Reads one RTCP datagram: SR timing for our reports, round-trip time from report blocks
    /// about our stream.
    func readRTCP(now: Double) {
        var from = RawSocketAddress()
        guard let n = rtcpSocket.receive(into: rxBuffer, from: &from) else { return }
        rtcpReceived(from: from, length: n, now: now)
    }

    /// An RTCP datagram the thread's ring received (see `readRTCP`).
    func rtcpArrived(_ datagram: UnsafeRawBufferPointer, from: UnsafePointer<sockaddr>, length: socklen_t, now: Double)
    {
        var source = RawSocketAddress()
        guard let n = take(datagram, from: from, length: length, into: &source) else { return }
        rtcpReceived(from: source, length: n, now: now)
    }

    /// The RTCP datagram of `length` bytes in `rxBuffer`, from `from`.
    private func rtcpReceived(from: RawSocketAddress, length n: Int, now: Double) {
        // A muxed leg takes RTCP on its RTP socket only.
        guard webrtc == nil else { return }
        guard configuration.remote != nil else {
            statistics.beforeSDP += 1
            return
        }
        if configuration.checksSources, !admitRTCPSource(from, length: n, now: now) { return }
        rtcpSource = from
        handleRTCP(length: n, now: now)
    }

    /// The source policy for the RTCP socket: the SDP's RTCP address (RTP port + 1) latches at
    /// once; another port may latch only on the host our RTP goes to (a NAT maps RTCP to a
    /// port of its own), under the same rules as RTP. Reports from anyone else would write
    /// loss and round-trip figures into the call's record.
    private func admitRTCPSource(_ from: RawSocketAddress, length: Int, now: Double) -> Bool {
        // The first packet's sender SSRC; SRTCP keeps the header in clear.
        guard let endpoint = from.endpoint else {
            statistics.sourceDropped += 1
            return false
        }
        let ssrc =
            length >= 8
            ? UInt32(bigEndian: UnsafeRawBufferPointer(rxBuffer).loadUnaligned(fromByteOffset: 4, as: UInt32.self)) : 0
        let sameHost = length >= 8 && remote?.endpoint.map { endpoint.isSameHost(as: $0) } == true
        switch rtcpSourcePolicy.packetReceived(from: endpoint, ssrc: ssrc, eligible: sameHost, now: now) {
        case .accept:
            return true
        case .latched:
            rtcpRemote = from
            return true
        case .drop:
            statistics.sourceDropped += 1
            return false
        }
    }

    /// Reads the RTCP datagram of `length` bytes in `rxBuffer` (SRTCP on a keyed leg).
    func handleRTCP(length: Int, now: Double) {
        var n = length
        if let srtp {
            guard let plain = unprotectReceived(srtp, length: n, rtcp: true) else { return }
            n = plain
        }
        guard let compound = try? RTCPCompoundPacket(parsing: UnsafeRawBufferPointer(rebasing: rxBuffer[0..<n])) else {
            statistics.malformed += 1
            return
        }
        // Tapped once it is known to be RTCP from the peer: no empty or stray datagram
        // reaches a capture.
        if tap != nil {
            tapPacket(
                UnsafeRawBufferPointer(rebasing: rxBuffer[0..<n]), sent: false, rtcp: true,
                local: webrtc != nil ? socket.local : rtcpSocket.local, remote: rtcpSource)
        }
        let arrival = NTPTimestamp(secondsSince1970: Date().timeIntervalSince1970)
        for packet in compound.packets {
            var blocks: [RTCPReportBlock] = []
            switch packet {
            case .senderReport(let sr):
                rx.recordSenderReport(ssrc: sr.ssrc, sr.senderInfo, arrival: now)
                blocks = sr.reportBlocks
            case .receiverReport(let rr):
                blocks = rr.reportBlocks
            default:
                continue
            }
            for block in blocks where block.ssrc == ssrc {
                if let rtt = block.roundTripTime(arrival: arrival) { statistics.roundTripMs = rtt * 1000 }
                statistics.remoteFractionLost = Double(block.fractionLost) / 256
            }
        }
    }
}
