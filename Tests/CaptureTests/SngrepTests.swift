import Foundation
import Glibc
import IOCore
import TestSupport
import Testing

@testable import Capture

/// sngrep (Debian `sngrep`) listening for HEP on 127.0.0.1 takes what `HEPPacket.encoded()`
/// sends and saves it to a pcap that PcapReader reads back: the SIP messages, addresses and
/// ports as sent.
@Test func sngrepReceivesHEPAndSavesAPcap() async throws {
    guard let sngrep = CaptureTools.find("sngrep") else {
        Issue.record(
            "sngrep is not installed: install the Debian package `sngrep` (apt-get install sngrep) to run this test")
        return
    }
    let directory = try CaptureTools.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("hep.pcap").path

    // A free port: bind port 0, read what the OS chose, close; then sngrep binds it. Another
    // test may take the port in between: then sngrep says so and we try again on a new one.
    var port = 0
    var child: ChildProcess?
    defer { child?.stop() }
    for _ in 0..<3 {
        port = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0)).local.port
        let c = try ChildProcess(
            sngrep, ["-N", "-q", "-F", "-L", "udp:127.0.0.1:\(port)", "-O", output], unblockingSignals: true)
        child = c
        // Wait (at most 30 s: a busy machine starts it slowly) until sngrep holds the port. Not
        // on `isRunning`: a child another harness's SIGCHLD handling reaped looks ended at once.
        _ = await eventually(timeout: 30) { udpPortIsBound(port) || c.output.contains("Address already in use") }
        if !c.output.contains("Address already in use") { break }
        c.stop()
    }
    let sngrepProcess = try #require(child)
    try #require(
        udpPortIsBound(port), "sngrep did not bind udp 127.0.0.1:\(port) within 30 s: \(sngrepProcess.output)")

    let sent = [
        HEPPacket(
            time: Samples.time, source: SocketAddress(host: "192.0.2.10", port: 5060),
            destination: SocketAddress(host: "192.0.2.20", port: 5062), transport: .udp,
            payloadType: .sip, captureID: 2001, payload: Samples.invite),
        HEPPacket(
            time: Samples.time + 0.25, source: SocketAddress(host: "192.0.2.20", port: 5062),
            destination: SocketAddress(host: "192.0.2.10", port: 5060), transport: .udp,
            payloadType: .sip, captureID: 2001, payload: Samples.ok)
    ]
    let sender = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
    let destination = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: port)))
    for packet in sent {
        #expect(packet.encoded().withUnsafeBytes { sender.send($0, to: destination) })
    }
    // sngrep has taken both datagrams off its socket once the socket's receive queue is empty.
    #expect(
        await eventually(timeout: 10) { udpReceiveQueue(port: port) == 0 },
        "sngrep left \(udpReceiveQueue(port: port) ?? -1) bytes unread")

    // SIGTERM alone, so sngrep closes its pcap; the SIGKILL after 5 s would lose it.
    #expect(await sngrepProcess.signal(SIGTERM, timeout: 5) != nil, "sngrep did not exit within 5 s of SIGTERM")

    let bytes = try #require(
        FileManager.default.contents(atPath: output), "sngrep saved no \(output): \(sngrepProcess.output)")
    let reader = try PcapReader(bytes: [UInt8](bytes))
    try #require(reader.packets.count == sent.count, "sngrep saved \(reader.packets.count) packets: \(reader.packets)")
    for (read, packet) in zip(reader.packets, sent) {
        #expect(read.payload == packet.payload)
        #expect(read.source == packet.source)
        #expect(read.destination == packet.destination)
        #expect(read.transport == .udp)
        #expect(abs(read.time - packet.time) < 1e-6)
    }
}

/// True when something holds UDP 127.0.0.1:`port`: our own bind there is refused. (Scanning
/// /proc/net/udp through Foundation missed sngrep's socket once the table was large, 50 KB.)
func udpPortIsBound(_ port: Int) -> Bool {
    do {
        _ = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: port))
        return false
    } catch {
        return true
    }
}

/// The bytes waiting in the receive queue of the UDP socket bound to 127.0.0.1:`port`
/// (`/proc/net/udp`'s rx_queue), nil when there is none. Read with `read(2)` to the end:
/// Foundation's reading of the file missed sockets once the table was large.
func udpReceiveQueue(port: Int) -> Int? {
    let fd = open("/proc/net/udp", O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    // "  12: 0100007F:13C4 00000000:0000 07 00000000:00000000 ...": local address, remote, state, tx:rx.
    let local = "0100007F:" + String(format: "%04X", port)
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count > 4, fields[1] == local else { continue }
        return fields[4].split(separator: ":").last.flatMap { Int($0, radix: 16) }
    }
    return nil
}
