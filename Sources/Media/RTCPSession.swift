import Foundation
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
        let report: RTCPPacket = tx.packetCount > 0
            ? .senderReport(RTCPSenderReport(ssrc: ssrc, senderInfo: tx.makeSenderInfo(ntp: wallclock, now: now), reportBlocks: blocks))
            : .receiverReport(RTCPReceiverReport(ssrc: ssrc, reportBlocks: blocks))
        let compound = RTCPCompoundPacket(packets: [report, .sourceDescription(RTCPSourceDescription(ssrc: ssrc, cname: cname))])
        // rtcp-mux on a WebRTC leg (RFC 5761): the RTP socket, the RTP address, SRTCP only.
        let muxed = webrtc != nil
        if muxed && srtp == nil { return }
        guard var destination = remote.address else { return }
        if !muxed { destination = SocketAddress(host: destination.host, port: destination.port + 1) }
        guard let to = RawSocketAddress(destination) else { return }
        guard let bytes = try? compound.serialize() else { return }
        let out = muxed ? socket : rtcpSocket
        if tap != nil { bytes.withUnsafeBytes { tapPacket($0, sent: true, rtcp: true, local: out.local, remote: to) } }
        guard let srtp else {
            bytes.withUnsafeBytes { _ = out.send($0, to: to) }
            return
        }
        // SRTCP: protected in txBuffer (free between sends on this thread), which has room
        // for the SRTCP index and tag.
        guard bytes.count <= 1500 else { return }
        bytes.withUnsafeBytes { txBuffer.copyMemory(from: $0) }
        guard case .ok(let n) = srtp.protectRTCP(txBuffer, length: bytes.count) else { return }
        _ = out.send(UnsafeRawBufferPointer(rebasing: txBuffer[0..<n]), to: to)
    }

    /// Reads one RTCP datagram: SR timing for our reports, round-trip time from report blocks
    /// about our stream.
    func readRTCP(now: Double) {
        var from = RawSocketAddress()
        guard let n = rtcpSocket.receive(into: rxBuffer, from: &from) else { return }
        // A muxed leg takes RTCP on its RTP socket only.
        guard webrtc == nil else { return }
        rtcpSource = from
        handleRTCP(length: n, now: now)
    }

    /// Reads the RTCP datagram of `length` bytes in `rxBuffer` (SRTCP on a keyed leg).
    func handleRTCP(length: Int, now: Double) {
        var n = length
        if let srtp {
            guard let plain = unprotectReceived(srtp, length: n, rtcp: true) else { return }
            n = plain
        }
        if tap != nil {
            tapPacket(UnsafeRawBufferPointer(rebasing: rxBuffer[0..<n]), sent: false, rtcp: true,
                      local: webrtc != nil ? socket.local : rtcpSocket.local, remote: rtcpSource)
        }
        guard let compound = try? RTCPCompoundPacket(parsing: UnsafeRawBufferPointer(rebasing: rxBuffer[0..<n])) else { return }
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
