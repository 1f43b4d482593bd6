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
    guard let sngrep = ProcessRunner.find("sngrep") else {
        Issue.record(
            "sngrep is not installed: install the Debian package `sngrep` (apt-get install sngrep) to run this test")
        return
    }
    let directory = try ProcessRunner.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("hep.pcap").path

    // A free port: bind port 0, read what the OS chose, close.
    let port = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0)).local.port
    let running = try ProcessRunner.Running(
        sngrep, ["-N", "-q", "-F", "-L", "udp:127.0.0.1:\(port)", "-O", output], in: directory)
    var stopped = false
    defer { if !stopped { _ = running.stop() } }

    // Wait (at most 30 s: a busy machine starts it slowly) until sngrep holds the port. Not
    // on `isRunning`: a child another harness's SIGCHLD handling reaped looks ended at once.
    _ = await eventually(timeout: 30) { udpPortIsBound(port) }
    try #require(
        udpPortIsBound(port), "sngrep did not bind udp 127.0.0.1:\(port) within 30 s: \(running.stop().errors)")

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
        usleep(100_000)
    }
    usleep(500_000)

    let result = running.stop()
    stopped = true
    #expect(!result.timedOut, "sngrep did not exit within 5 s of SIGTERM")

    let bytes = try #require(
        FileManager.default.contents(atPath: output), "sngrep saved no \(output): \(result.errors)")
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
