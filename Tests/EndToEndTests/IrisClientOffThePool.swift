import IrisAPI
import IrisClient
import TestSupport

// The Swift client's verbs block their caller, as the Iris SDK's do (each waits for its HTTP
// answer; `waitForEnd` for the session's end). In an async test these overloads are the
// ones the compiler picks: each runs the blocking verb off the cooperative pool
// (`offThePool`), so a test that waits on the gateway holds no thread other tests need.

extension IrisRtcConnection {
    func snapshot(roomId: String) async throws(IrisError) -> SessionSnapshot {
        try await offThePool { () throws(IrisError) in try self.snapshot(roomId: roomId) }
    }

    func sessions() async throws(IrisError) -> [SessionSnapshot] {
        try await offThePool { () throws(IrisError) in try self.sessions() }
    }

    func sipTrace(roomId: String) async throws(IrisError) -> SIPTraceDocument {
        try await offThePool { () throws(IrisError) in try self.sipTrace(roomId: roomId) }
    }

    func capture(roomId: String) async throws(IrisError) -> [UInt8] {
        try await offThePool { () throws(IrisError) in try self.capture(roomId: roomId) }
    }

    func metricsText() async throws(IrisError) -> String {
        try await offThePool { () throws(IrisError) in try self.metricsText() }
    }
}

extension IrisRtcAudioSession {
    @discardableResult
    func createWithTN(
        targetTN: String, sourceTN: String, profile: String? = nil, notificationData: String? = nil,
        traceId: String? = nil, callerName: String? = nil, privacy: String? = nil,
        headers: [String: String]? = nil, opus: OpusOptions? = nil, capture: Bool = false,
        recording: RecordingOptions? = nil, amd: AMDOptions? = nil, agent: MediaWebSocket? = nil
    ) async throws(IrisError) -> String {
        try await offThePool { () throws(IrisError) in
            try self.createWithTN(
                targetTN: targetTN, sourceTN: sourceTN, profile: profile, notificationData: notificationData,
                traceId: traceId, callerName: callerName, privacy: privacy, headers: headers, opus: opus,
                capture: capture, recording: recording, amd: amd, agent: agent)
        }
    }

    func recording(_ request: RecordingRequest) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.recording(request) }
    }

    func startStream(_ request: StreamRequest) async throws(IrisError) -> StreamInfo {
        try await offThePool { () throws(IrisError) in try self.startStream(request) }
    }

    func stopStream(_ id: String) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.stopStream(id) }
    }

    func join(roomId: String, roomToken: String) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.join(roomId: roomId, roomToken: roomToken) }
    }

    static func reject(
        connection: IrisRtcConnection, roomId: String, roomToken: String, busy: Bool = false
    ) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in
            try Self.reject(connection: connection, roomId: roomId, roomToken: roomToken, busy: busy)
        }
    }

    func hold() async throws(IrisError) { try await offThePool { () throws(IrisError) in try self.hold() } }
    func unhold() async throws(IrisError) { try await offThePool { () throws(IrisError) in try self.unhold() } }
    func mute() async throws(IrisError) { try await offThePool { () throws(IrisError) in try self.mute() } }
    func unmute() async throws(IrisError) { try await offThePool { () throws(IrisError) in try self.unmute() } }

    func merge(heldSession: IrisRtcAudioSession) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.merge(heldSession: heldSession) }
    }

    func insertDTMFtone(_ tones: String, durationMs: Int? = nil) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.insertDTMFtone(tones, durationMs: durationMs) }
    }

    func close() async throws(IrisError) { try await offThePool { () throws(IrisError) in try self.close() } }

    func transfer(to targetTN: String) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.transfer(to: targetTN) }
    }

    func transfer(replacing other: IrisRtcAudioSession) async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.transfer(replacing: other) }
    }

    func acceptTransfer() async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.acceptTransfer() }
    }

    func declineTransfer() async throws(IrisError) {
        try await offThePool { () throws(IrisError) in try self.declineTransfer() }
    }

    func waitForEnd(timeout: Double) async -> Bool { await offThePool { self.waitForEnd(timeout: timeout) } }
}

extension IrisNotificationListener {
    func next(timeout: Double) async -> SessionEvent? { await offThePool { self.next(timeout: timeout) } }
}

extension WebSocketClient {
    func receive(timeout: Double) async throws(IrisTransportError) -> String? {
        try await offThePool { () throws(IrisTransportError) in try self.receive(timeout: timeout) }
    }
}
