// The API listens before the gateway exists (notifications name its address): until the
// gateway is attached and has opened its SIP sockets, /healthz and /readyz say 503
// "starting", so a balancer never sends a session to a gateway that would refuse it.

import ControlAPI
import Testing

@Suite struct HealthBeforeAttachTests {
    @Test(arguments: ["/healthz", "/readyz"])
    func healthIsStartingUntilTheGatewayIsThere(_ path: String) async throws {
        let api = ControlAPIServer(key: "k", configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"))
        let port = try api.start()
        defer { api.stop() }
        let socket = try TestSocket(port: port)
        try await socket.sendRequest("GET", path)
        let response = try await socket.readResponse()
        #expect(response.status == 503)
        #expect(response.text.contains("\"status\":\"starting\""), "\(response.text)")
    }
}
