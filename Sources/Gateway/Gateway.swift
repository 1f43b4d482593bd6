/// The gateway layer: trunk profiles, sessions, SIP-to-event translation (issue 4).
public enum GatewayInfo {
    public static let version = "0.1.0"
}
