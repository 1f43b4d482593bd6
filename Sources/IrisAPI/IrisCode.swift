/// Iris error codes (docs/api.md, "Iris codes"), carried in API errors and `onSessionError`.
public enum IrisCode {
    public static let incorrectParams = -103
    public static let incorrectState = -104
    public static let tokenExpired = -105
    public static let targetNoReply = -402
    public static let remoteDoesNotExist = -407
    public static let remoteUnreachable = -412
    public static let participantLeft = -416
    public static let callForbidden = -417
    public static let serviceUnavailable = -503
}
