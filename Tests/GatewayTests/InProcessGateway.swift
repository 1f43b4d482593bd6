import CarrierSim
import Foundation
import Gateway
import Glibc
import IOCore
import IrisAPI
import SIP
import Synchronization
import TestSupport

/// A gateway composed from its parts inside the test process: the SIP user agent, the media
/// engine and the call records on a temporary SQLite file, with the built-in carrier
/// simulator as its trunk, every socket on 127.0.0.1 port 0. Session behaviour is tested
/// through the same `Gateway` calls the control API makes, without spawning the binary.
final class InProcessGateway: Sendable {
    let gateway: Gateway
    let simulator: CarrierSimulator
    /// The gateway's SIP address (UDP), for calls the simulator places to it.
    let sipAddress: SocketAddress
    let dataDir: String

    /// The carrier-sim profile from `sip-profiles/` with its proxy aimed at the simulator;
    /// `edit` changes the profile's JSON5 text before it is parsed.
    init(timeScale: Double = 0.1, edit: (String) -> String = { $0 }) throws {
        dataDir =
            FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-inproc-\(UUID().uuidString)").path
        var sim = CarrierSimulator.Configuration()
        sim.listen = SocketAddress(host: "127.0.0.1", port: 0)
        sim.tcp = false
        sim.timeScale = timeScale
        sim.mediaThreads = 1
        sim.lossPercent = 0
        sim.jitterMs = 0
        simulator = try CarrierSimulator(configuration: sim)
        do {
            guard let carrier = try simulator.start().first else {
                throw SocketError("the simulator did not listen", code: EINVAL)
            }
            let text = try String(contentsOf: Self.profileURL, encoding: .utf8)
                .replacingOccurrences(
                    of: "sip:127.0.0.1:5090;transport=udp", with: "sip:127.0.0.1:\(carrier.address.port);transport=udp")
            let profile = try ProfileLoader.parse(edit(text), file: Self.profileURL.path)
            var sip = SIPUserAgentConfiguration()
            sip.t1 = 0.1
            let configuration = GatewayConfiguration(
                sipListen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))], rtpPorts: try Self.rtpPorts(),
                mediaThreads: 1,
                dataDir: dataDir, eventRetention: 60, sip: sip,
                environment: ["CARRIER_SIM_PASSWORD": sim.authPassword])
            gateway = try Gateway(configuration: configuration, profiles: [profile])
            guard let local = try gateway.start().first else {
                throw SocketError("the gateway did not listen", code: EINVAL)
            }
            sipAddress = local.address
        } catch {
            simulator.shutdown()
            try? FileManager.default.removeItem(atPath: dataDir)
            throw error
        }
    }

    /// Ends every session, stops both user agents and removes the data directory.
    func stop() async {
        await offThePool { [self] in
            gateway.shutdown(timeout: 2)
            simulator.shutdown()
        }
        try? FileManager.default.removeItem(atPath: dataDir)
    }

    /// Runs one of the gateway's calls (which wait for its SIP loop) on a thread of its own,
    /// so a test never holds one of the cooperative pool's few threads while it waits.
    func run<T: Sendable>(_ body: @escaping @Sendable (Gateway) throws -> T) async throws -> T {
        try await offThePool { [gateway] () throws in try body(gateway) }
    }

    /// The session's events so far, in order.
    func events(_ roomId: String) -> [SessionEvent] { gateway.events.history(roomId: roomId) }

    /// True once the session has reported `status`.
    func reached(_ roomId: String, _ status: SessionStatus) -> Bool {
        events(roomId).contains { $0.event == .onSessionSIPStatus && $0.status == status }
    }

    static let profileURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("sip-profiles/carrier-sim.json5")

    /// 400 RTP ports the OS says are free now; a port another process takes later makes that
    /// call's bind fail, as in production, never the test's setup.
    private static func rtpPorts() throws -> ClosedRange<UInt16> { try freePortRange(count: 400) }
}

/// The app's side of the platform leg: plain RTP on 127.0.0.1, PCMU and telephone-event.
final class AppLeg: Sendable {
    let socket: UDPSocket
    var port: Int { socket.local.port }
    private let sequence = Mutex<UInt16>(0)

    init() throws { socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0)) }

    /// The SDP offer an app sends with `createWithTN`.
    var offer: MediaBody {
        MediaBody(
            sdp: "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                + "m=audio \(port) RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
                + "a=fmtp:101 0-15\r\na=sendrecv\r\n")
    }

    /// The gateway's platform RTP address from its answer (`c=` and `m=audio`).
    static func address(ofAnswer sdp: String) -> SocketAddress? {
        var host: String?
        var port: Int?
        for line in sdp.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ")
            if line.hasPrefix("c=IN IP4 "), fields.count == 3 { host = String(fields[2]) }
            if line.hasPrefix("m=audio "), fields.count > 1 { port = Int(fields[1]) }
        }
        guard let host, let port else { return nil }
        return SocketAddress(host: host, port: port)
    }

    /// Sends one 20 ms PCMU packet of a 1 kHz tone to `to`.
    func sendFrame(to: SocketAddress) {
        let seq = sequence.withLock { s in
            s &+= 1
            return s
        }
        var packet: [UInt8] = [0x80, 0x00, UInt8(seq >> 8), UInt8(seq & 0xFF)]
        let ts = UInt32(seq) &* 160
        packet += [
            UInt8(ts >> 24), UInt8((ts >> 16) & 0xFF), UInt8((ts >> 8) & 0xFF), UInt8(ts & 0xFF), 0x12, 0x34, 0x56, 0x78
        ]
        // A 1 kHz tone at 8 kHz is 8 samples a cycle; these are its mu-law bytes.
        let cycle: [UInt8] = [0xFF, 0x9E, 0x8F, 0x9E, 0x7F, 0x1E, 0x0F, 0x1E]
        for i in 0..<160 { packet.append(cycle[i % 8]) }
        guard let raw = RawSocketAddress(to) else { return }
        packet.withUnsafeBytes { _ = socket.send($0, to: raw) }
    }

    /// Datagrams waiting on the socket now, read and counted.
    func drain() -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 2048)
        var from = RawSocketAddress()
        while buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) != nil { count += 1 }
        return count
    }
}
